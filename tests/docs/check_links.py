#!/usr/bin/python3
"""Checks the links of README.md and docs/*.md.

Fails (exit 1, one line per problem) when
  - a relative link or image, [text](path) or ![text](path), names a file or folder that
    does not exist (resolved from the folder of the page that holds it);
  - a link's #anchor names no heading of its page (GitHub's anchors: lower case, punctuation
    other than - and _ dropped, spaces as -);
  - a page of docs/ is not linked from README.md.
Links inside code spans and fenced code blocks are not links; http(s) and mailto are not
checked.

Usage: check_links.py SOURCE_DIR
"""
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6} +(.+?) *#* *$", re.M)


def text_of(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def anchors(path):
    names = set()
    for title in HEADING.findall(FENCE.sub("", text_of(path))):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower())
        names.add(slug.replace(" ", "-"))
    return names


def main(root):
    root = os.path.normpath(root)
    pages = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    pages += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    pages = [os.path.normpath(p) for p in pages]
    problems = []
    readme_targets = set()
    for page in pages:
        body = CODE_SPAN.sub("", FENCE.sub("", text_of(page)))
        for target in LINK.findall(body):
            if re.match(r"(https?|mailto):", target):
                continue
            where, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), where)) if where else page
            name = os.path.relpath(page, root)
            if not os.path.exists(dest):
                problems.append(f"{name}: {target}: no such file")
                continue
            if page == pages[0]:
                readme_targets.add(dest)
            if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{name}: {target}: no heading with that anchor")
    for page in pages[1:]:
        if page not in readme_targets:
            problems.append(f"README.md: no link to {os.path.relpath(page, root)}")
    for p in problems:
        print(p)
    print(f"checked {len(pages)} pages: {'FAIL' if problems else 'ok'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

#!/usr/bin/python3
"""Runs the shell examples of README.md and docs/*.md and checks the output each page shows.

A doc example is code: when the library, a tool or a page drifts, the example stops
reproducing, and this test fails.

The convention (docs/testing.md, "Doc examples"): every shell example, a fenced block marked
sh, shell, bash or console, or an indented block whose first line starts with "$ ", has an HTML
comment on the line before it (blank lines between allowed), which the rendered page hides:

    <!-- example: run [needs=FEATURE,...] [ignore=REGEX]... -->
        run the block; lines starting with "$ " are commands (a line ending in a backslash
        continues on the next), the lines after a command are the output the page shows for
        it; a block without any "$ " line is all commands and shows no output
    <!-- example: skip: REASON -->
        not run, for the reason given (a placeholder program, the build itself)

Each command runs with sh, its output on a pseudo-terminal (stdout and stderr in the order a
terminal shows them), in a scratch folder laid out as a clone after ./scripts/demo.sh:
the source tree's files (linked), build/ (the build tree's entries, and build/demo/gemm_check,
which demo.sh builds from tests/programs/gemm_check.f90: the build's own copy), and bin/ on PATH
holding amxblas-run, amxblas-report and amxblas-replay as an installation would. No AMXBLAS_*
variable and no LD_PRELOAD of the caller's reaches the commands. /path/to/libamxblas.so in a
command is the build's library, and that library's path in the output reads as
/path/to/libamxblas.so. The commands of one page run in order, in one folder, so an example may
use the files an earlier one wrote. A command must exit with status 0, and print what the page
shows, compared line by line after
  - the ignore= regular expressions of the marker are deleted from both (no spaces in them:
    write \\s), for values that differ by run or machine (a pid, a checksum of the real BLAS);
  - every number with a fraction or an exponent (a time, a rate, an error: 0.123312, 2.5E-17,
    0.03x) reads as #, on both sides; integers (counts, sizes, routes) must match;
  - a word of dashes only (a table's rule, as wide as its column) reads as ---; runs of
    spaces count as one, and leading and trailing spaces and blank lines at the end do not
    count;
  - a shown line "..." stands for any number of lines.
FEATURE (needs=) is amx or avx512 (the library runs that backend here, as
tests/common/backends_here.cc says), mpi (mpirun and build/tests/programs/pdgemm_check exist),
or one of those prefixed with ! (the machine lacks it). An example whose needs the machine does
not meet is reported as skipped; a page whose every example is skipped exits 77 (CTest: skipped).

Usage:
  run_examples.py --markers SOURCE_DIR
      every shell example of README.md and docs/*.md has a well-formed marker (no build needed)
  run_examples.py SOURCE_DIR BUILD_DIR WORK_DIR PAGE --gemm-check PROGRAM --backends-here PROGRAM
      runs the examples of PAGE (e.g. docs/using.md) in WORK_DIR (emptied first)
"""
import argparse
import difflib
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time

SHELL_INFO = {"sh", "shell", "bash", "console"}
MARKER = re.compile(r"^<!--\s*example:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w-]*)")
DASHES = re.compile(r"(?<!\S)-{3,}(?!\S)")  # a table's rule, as wide as its column's values
FLOAT = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)")
FEATURES = {"amx", "avx512", "mpi"}
PLACEHOLDER_LIBRARY = "/path/to/libamxblas.so"
COMMAND_TIMEOUT_S = 300


class Example:
    def __init__(self, page, line, lines, marker, marker_line):
        self.page, self.line, self.lines = page, line, lines
        self.marker, self.marker_line = marker, marker_line
        self.kind, self.needs, self.ignore, self.problem = None, [], [], None
        self.parse_marker()

    def parse_marker(self):
        if self.marker is None:
            self.problem = ("a shell example without a marker: put <!-- example: run --> or "
                            "<!-- example: skip: REASON --> on the line before it (tests/docs/run_examples.py)")
            return
        if re.match(r"skip:\s*\S", self.marker):
            self.kind = "skip"
            return
        words = self.marker.split()
        if not words or words[0] != "run":
            self.problem = f"marker '{self.marker}': expected 'run [needs=...] [ignore=...]' or 'skip: REASON'"
            return
        self.kind = "run"
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key == "needs" and value:
                self.needs += value.split(",")
                unknown = [f for f in self.needs if f.lstrip("!") not in FEATURES]
                if unknown:
                    self.problem = f"marker: unknown feature {unknown[0]} (known: {', '.join(sorted(FEATURES))})"
            elif key == "ignore" and value:
                try:
                    self.ignore.append(re.compile(value))
                except re.error as e:
                    self.problem = f"marker: ignore={value}: {e}"
            else:
                self.problem = f"marker: '{word}' is neither needs=FEATURE,... nor ignore=REGEX"

    def commands(self):
        """[(line number, command text, [shown output lines])]."""
        if not any(l.startswith("$ ") for l in self.lines):
            text = "\n".join(self.lines).strip()
            return [(self.line, text, None)] if text else []
        out, i = [], 0
        while i < len(self.lines):
            line = self.lines[i]
            if not line.startswith("$ "):
                i += 1  # text before the first prompt: none in a well-formed example
                continue
            start, cmd = i, [line[2:]]
            while cmd[-1].endswith("\\") and i + 1 < len(self.lines):
                i += 1
                cmd.append(self.lines[i])
            i += 1
            shown = []
            while i < len(self.lines) and not self.lines[i].startswith("$ "):
                shown.append(self.lines[i])
                i += 1
            out.append((self.line + start, "\n".join(cmd), shown))
        return out


def shell_examples(path, name):
    """Every shell example of a page, with the marker before it (or None)."""
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    examples = []
    i = 0

    def marker_before(k):
        j = k - 1
        while j >= 0 and not text[j].strip():
            j -= 1
        m = MARKER.match(text[j].strip()) if j >= 0 else None
        return (m.group(1), j + 1) if m else (None, None)

    while i < len(text):
        fence = FENCE.match(text[i])
        if fence:
            close = fence.group(1)
            j = i + 1
            while j < len(text) and not text[j].startswith(close):
                j += 1
            if fence.group(2).lower() in SHELL_INFO:
                marker, at = marker_before(i)
                examples.append(Example(name, i + 2, text[i + 1:j], marker, at))
            i = j + 1
            continue
        if text[i].startswith("    $ ") and (i == 0 or not text[i - 1].strip()):
            j = i
            while j < len(text) and (text[j].startswith("    ") or not text[j].strip()):
                j += 1
            block = [l[4:] for l in text[i:j]]
            while block and not block[-1].strip():
                block.pop()
            marker, at = marker_before(i)
            examples.append(Example(name, i + 1, block, marker, at))
            i = j
            continue
        i += 1
    return examples


def pages(source):
    docs = os.path.join(source, "docs")
    names = ["README.md"] + sorted("docs/" + n for n in os.listdir(docs) if n.endswith(".md"))
    return [(os.path.join(source, n), n) for n in names]


def check_markers(source):
    problems, count = [], 0
    for path, name in pages(source):
        for ex in shell_examples(path, name):
            count += 1
            if ex.problem:
                problems.append(f"{name}:{ex.line}: {ex.problem}")
    for p in problems:
        print(p)
    print(f"{count} shell examples in README.md and docs/*.md: {'FAIL' if problems else 'every one marked'}")
    return 1 if problems else 0


def normalise(lines, ignore):
    out = []
    for line in lines:
        for rx in ignore:
            line = rx.sub("", line)
        line = DASHES.sub("---", FLOAT.sub("#", line))
        out.append(" ".join(line.split()))
    while out and not out[-1]:
        out.pop()
    return out


def matches(shown, actual):
    """shown (with "..." lines: any number of lines) against actual, line for line."""
    memo = {}

    def at(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(shown):
            r = j == len(actual)
        elif shown[i] == "...":
            r = any(at(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and shown[i] == actual[j] and at(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return at(0, 0)


def link(target, name):
    if os.path.lexists(name):
        os.remove(name)
    os.symlink(target, name)


def lay_out(work, source, build, gemm_check):
    """The scratch folder: the clone (linked), build/, build/demo/gemm_check, bin/."""
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, "build", "demo"))
    os.makedirs(os.path.join(work, "bin"))
    for entry in os.listdir(source):
        if entry not in (".git", "build"):
            link(os.path.join(source, entry), os.path.join(work, entry))
    for entry in os.listdir(build):
        if entry != "demo":
            link(os.path.join(build, entry), os.path.join(work, "build", entry))
    link(gemm_check, os.path.join(work, "build", "demo", "gemm_check"))
    for tool, target in (("amxblas-run", os.path.join(source, "scripts", "amxblas-run")),
                         ("amxblas-report", os.path.join(source, "scripts", "amxblas-report")),
                         ("amxblas-replay", os.path.join(build, "scripts", "replay", "amxblas-replay"))):
        link(target, os.path.join(work, "bin", tool))


def environment(work):
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith("AMXBLAS_") and k != "LD_PRELOAD"}
    env["PATH"] = os.path.join(work, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    # A new user's home: no wisdom file of a calibration the developer ran (docs/cost-model.md).
    env["HOME"] = os.path.join(work, "home")
    os.makedirs(env["HOME"], exist_ok=True)
    env.pop("XDG_DATA_HOME", None)
    if os.geteuid() == 0:  # Open MPI refuses root unless told
        env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def features_here(work, backends_here):
    here = set(subprocess.run([backends_here], capture_output=True, text=True, check=True).stdout.split())
    have = {f for f in ("amx", "avx512") if f in here}
    if shutil.which("mpirun") and os.path.exists(os.path.join(work, "build", "tests", "programs", "pdgemm_check")):
        have.add("mpi")
    return have


def unmet(needs, have):
    for f in needs:
        if f.startswith("!") and f[1:] in have:
            return f"this machine has {f[1:]}"
        if not f.startswith("!") and f not in have:
            return f"this machine lacks {f}"
    return None


def run_in_terminal(command, cwd, env):
    """Runs command with sh, its stdout and stderr on a pseudo-terminal, as in the terminal the
    page's output was copied from: a program's stdout is then line-buffered, so its lines and
    the library's (on stderr) come in the order they are written. Returns (output without the
    terminal's carriage returns, exit status or why it was stopped)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(["sh", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=slave, stderr=slave, start_new_session=True)
    finally:
        os.close(slave)
    chunks, deadline = [], time.monotonic() + COMMAND_TIMEOUT_S
    status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(proc.pid, signal.SIGKILL)
            status = f"killed after {COMMAND_TIMEOUT_S} s"
            break
        ready, _, _ = select.select([master], [], [], min(left, 1.0))
        if not ready:
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait()
    output = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n").replace("\r", "")
    return output, status if status else code


def run_page(args):
    page_path = os.path.join(args.source, args.page)
    examples = shell_examples(page_path, args.page)
    bad = [ex for ex in examples if ex.problem]
    for ex in bad:
        print(f"FAIL {args.page}:{ex.line}: {ex.problem}")
    if bad:
        return 1
    work = os.path.abspath(args.work)
    lay_out(work, os.path.abspath(args.source), os.path.abspath(args.build), os.path.abspath(args.gemm_check))
    env = environment(work)
    have = features_here(work, args.backends_here)
    library = os.path.join(work, "build", "shim", "libamxblas.so")
    ran = skipped = failed = 0
    for ex in examples:
        if ex.kind == "skip":
            print(f"not run  {args.page}:{ex.line}: {ex.marker}")
            continue
        why = unmet(ex.needs, have)
        if why:
            print(f"SKIP     {args.page}:{ex.line}: needs {','.join(ex.needs)}: {why}")
            skipped += 1
            continue
        ran += 1
        for line, command, shown in ex.commands():
            text = command.replace(PLACEHOLDER_LIBRARY, library)
            output, status = run_in_terminal(text, work, env)
            output = output.replace(library, PLACEHOLDER_LIBRARY).replace(work + "/", "")
            actual = output.split("\n")
            problem = None
            if status != 0:
                problem = f"exit status {status}"
            elif shown is not None:
                want, got = normalise(shown, ex.ignore), normalise(actual, ex.ignore)
                if not matches(want, got):
                    diff = difflib.unified_diff(want, got, "shown on the page", "printed", lineterm="", n=2)
                    problem = "the output differs from the page's (normalised):\n" + "\n".join(diff)
            if problem:
                failed += 1
                print(f"FAIL     {args.page}:{line}: $ {command}\n{problem}\n--- printed:\n{output.rstrip()}\n")
                break  # the block's later commands depend on this one
            print(f"ok       {args.page}:{line}: $ {command.splitlines()[0]}")
    print(f"{args.page}: {ran} example(s) run, {failed} failed, {skipped} skipped "
          f"(needs), {sum(ex.kind == 'skip' for ex in examples)} not run by their marker")
    if failed:
        return 1
    return 77 if ran == 0 else 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--markers", action="store_true")
    p.add_argument("source")
    p.add_argument("build", nargs="?")
    p.add_argument("work", nargs="?")
    p.add_argument("page", nargs="?")
    p.add_argument("--gemm-check")
    p.add_argument("--backends-here")
    args = p.parse_args(argv)
    if args.markers:
        return check_markers(args.source)
    if not (args.build and args.work and args.page and args.gemm_check and args.backends_here):
        p.error("SOURCE_DIR BUILD_DIR WORK_DIR PAGE --gemm-check PROGRAM --backends-here PROGRAM")
    return run_page(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

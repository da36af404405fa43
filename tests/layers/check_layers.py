#!/usr/bin/python3
"""Checks that the library's layers point only downward: shim -> policy -> kernels, and inside
kernels/ that its folders keep their order (docs/design.md).

Fails (exit 1, one line per violation) when
  - a file includes a header of a layer above its own ("policy/" or "shim/" from kernels/,
    "shim/" from policy/), or of the tests;
  - a file of policy/ includes anything of kernels/ outside kernels/common/: the policy decides
    from the call, the settings and the facts a scan returns, and reads no matrix itself;
  - a file of kernels/ includes a header of a kernels/ folder that is not below its own in
    KERNEL_ORDER (a folder above, or a sibling: the FP64 engines never reach each other), or
    lies in a folder the order does not name;
  - a file of shim/ includes a header of an engine's folder or of kernels/engine/: the shim
    reaches the engines only through kernels/driver/ (and reads their names and limits in
    kernels/common/);
  - a layer's CMakeLists.txt links the library of a layer above it;
  - the project's own #include graph has a cycle, counting a .cc file and its header as one
    node;
  - with --libs KERNELS.a POLICY.a: a function of kernels/ calls one of policy/ (an undefined
    symbol of the kernels' archive that the policy's defines), or policy/ calls any function of
    kernels/ (so no callback of the policy's can reach the kernels either: the policy has
    nothing to hand one to); or an object of the kernels' archive calls a function defined in
    a kernels/ folder that is not below its own (the archive's members are named after their
    sources, which the source tree places in their folders).

Usage: check_layers.py SOURCE_DIR [--libs KERNELS_ARCHIVE POLICY_ARCHIVE]
"""
import os
import re
import subprocess
import sys

LAYERS = ["kernels", "policy", "shim"]  # bottom to top
LIBRARY = {"kernels": "amxblas_kernels", "policy": "amxblas_policy", "shim": "amxblas_shim"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".cc", ".def", ".inc")


def kernel_order(root):
    """kernels/'s folders, bottom to top, one list per rank (docs/design.md). A folder may use
    the folders of the ranks below its own, and itself; the folders of one rank are siblings,
    which never use each other. The FP64 engines are the rows of kernels/common/engines.def,
    one folder each."""
    engines = re.findall(r"^AMXBLAS_FP64_ENGINE\(([a-z0-9_]+),", open(
        os.path.join(root, "kernels", "common", "engines.def")).read(), re.M)
    return [["common"], ["runtime"], ["isa"], ["pack", "scan", "certificate"], ["engine"], engines,
            ["driver"]]


def kernel_rank(order, folder):
    for rank, folders in enumerate(order):
        if folder in folders:
            return rank
    return None


def kernel_folder(rel):
    """The folder of kernels/ a path lies in ("isa" for kernels/isa/avx512/...), or None."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "kernels" else None


def order_problem(order, user, used):
    """What is wrong with kernels/ folder `user` using folder `used`, or None."""
    if user == used:
        return None
    ru, rd = kernel_rank(order, user), kernel_rank(order, used)
    if ru is None or rd is None:
        return None  # reported once per file: no place in the order
    if rd < ru:
        return None
    if rd == ru:
        return "kernels/%s/ and kernels/%s/ are siblings in the order of kernels/'s folders" % (user, used)
    return "kernels/%s/ is above kernels/%s/ in the order of kernels/'s folders" % (used, user)


def walk(root, layer):
    """Every file of a layer, as a path relative to the source root."""
    for folder, _, names in os.walk(os.path.join(root, layer)):
        for name in sorted(names):
            yield os.path.relpath(os.path.join(folder, name), root)


def include_problems(rel, inc, layer_index, order):
    """What is wrong with file `rel` (in LAYERS[layer_index]) including `inc`."""
    layer = LAYERS[layer_index]
    top = inc.split("/")[0]
    if top in LAYERS[layer_index + 1:] + ["tests"]:
        return ["%s includes \"%s\", a layer above" % (rel, inc)]
    if layer == "policy" and top == "kernels" and not inc.startswith("kernels/common/"):
        return ["%s includes \"%s\": policy/ reads no matrix (only kernels/common/)" % (rel, inc)]
    user, used = kernel_folder(rel), kernel_folder(inc)
    engines = order[-2]  # the rank below driver/: the rows of engines.def
    if layer == "shim" and used and (used == "engine" or used in engines):
        return ["%s includes \"%s\": shim/ reaches the engines only through kernels/driver/" % (rel, inc)]
    if user and used:
        why = order_problem(order, user, used)
        if why:
            return ["%s includes \"%s\": %s" % (rel, inc, why)]
    return []


def symbols(archive, defined):
    """Global symbols an archive defines (defined=True) or needs from elsewhere."""
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-C", "-g", flag, archive], check=True, capture_output=True,
                         text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] in "TWVBDR":
            names.add(parts[2])
        elif len(parts) == 2 and parts[0] in "UwvV":
            names.add(parts[1])
    return names


def members(archive, root):
    """Per member of the archive (named after its source: foo.cc.o), its kernels/ folder, the
    symbols it defines (not weak: an inline function's copy is no definition of its own) and
    those it needs."""
    sources = {}
    for folder, _, names in os.walk(os.path.join(root, "kernels")):
        for name in names:
            sources.setdefault(name, []).append(kernel_folder(os.path.relpath(os.path.join(folder, name), root)))
    out = subprocess.run(["nm", "-A", "-g", archive], check=True, capture_output=True, text=True).stdout
    found = {}
    line_re = re.compile(r"^.*?:([^:/]+\.o):\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(\S+)$")
    for line in out.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        member, kind, name = m.groups()
        entry = found.setdefault(member, (set(), set()))
        if kind in "TDBR":
            entry[0].add(name)
        elif kind == "U":
            entry[1].add(name)
    result, problems = {}, []
    for member, (defined, needed) in found.items():
        folders = sources.get(member[:-2], [])
        if len(folders) != 1:
            problems.append("archive member %s: %s" % (member, "no source of that name under kernels/" if not folders
                                                      else "sources of that name in several folders"))
            continue
        result[member] = (folders[0], defined, needed)
    return result, problems


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def order_call_problems(kernels_archive, root, order):
    """Calls between kernels/'s folders against their order, from the archive's symbols."""
    objs, problems = members(kernels_archive, root)
    owner = {}
    for member, (folder, defined, _) in objs.items():
        for name in defined:
            owner[name] = folder
    bad = []
    for member, (folder, _, needed) in sorted(objs.items()):
        for name in sorted(needed):
            if name in owner:
                why = order_problem(order, folder, owner[name])
                if why:
                    bad.append((member, folder, owner[name], name, why))
    for (member, folder, used, _, why), pretty in zip(bad, demangle([b[3] for b in bad])):
        problems.append("kernels/%s/%s calls %s, a function of kernels/%s/: %s" %
                        (folder, member[:-2], pretty, used, why))
    return problems


def call_problems(kernels_archive, policy_archive):
    problems = []
    kernels_defined = symbols(kernels_archive, True)
    policy_defined = symbols(policy_archive, True)
    for name in sorted(symbols(kernels_archive, False) & policy_defined):
        problems.append("kernels/ calls %s, a function of policy/" % name)
    ours = {n for n in symbols(policy_archive, False) & kernels_defined if "amxblas::" in n}
    for name in sorted(ours):
        problems.append("policy/ calls %s, a function of kernels/" % name)
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else "."
    problems = []
    order = kernel_order(root)
    graph = {}  # node (path without extension) -> set of nodes it includes
    for layer_index, layer in enumerate(LAYERS):
        for rel in walk(root, layer):
            path = os.path.join(root, rel)
            if os.path.basename(rel) == "CMakeLists.txt":
                text = open(path).read()
                for link in re.findall(r"target_link_libraries\(([^)]*)\)", text):
                    for upper in LAYERS[layer_index + 1:]:
                        if re.search(r"\b%s\b" % LIBRARY[upper], link):
                            problems.append("%s links %s, a layer above" % (rel, LIBRARY[upper]))
                continue
            if not rel.endswith(SOURCES):
                continue
            node = os.path.splitext(rel)[0]
            folder = kernel_folder(rel)
            if folder and kernel_rank(order, folder) is None:
                problems.append("%s lies in kernels/%s/, which the order of kernels/'s folders does not name "
                                "(tests/layers/check_layers.py, docs/design.md)" % (rel, folder))
            for inc in INCLUDE.findall(open(path).read()):
                problems += include_problems(rel, inc, layer_index, order)
                if inc.split("/")[0] in LAYERS:
                    target = os.path.splitext(inc)[0]
                    if target != node:
                        graph.setdefault(node, set()).add(target)

    # Cycles: depth-first search, reporting each back edge's cycle once.
    state, stack, seen_cycles = {}, [], set()

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == "open":
                cycle = stack[stack.index(m):]
                key = frozenset(cycle)
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    problems.append("include cycle: " + " -> ".join(cycle + [m]))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n)

    calls_checked = False
    if "--libs" in argv:
        i = argv.index("--libs")
        problems += call_problems(argv[i + 1], argv[i + 2])
        problems += order_call_problems(argv[i + 1], root, order)
        calls_checked = True

    for p in problems:
        print("check_layers: " + p)
    if not problems:
        print("check_layers: %d modules with includes, arrows only downward (kernels/: %s), no include cycle%s"
              % (len(graph), " < ".join(", ".join(rank) for rank in order),
                 "; no call from kernels/ into policy/ or back, nor against the order inside kernels/"
                 if calls_checked else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

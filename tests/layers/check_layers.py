#!/usr/bin/python3
"""Checks that the library's layers point only downward: shim -> policy -> kernels.

Fails (exit 1, one line per violation) when
  - a file includes a header of a layer above its own ("policy/" or "shim/" from kernels/,
    "shim/" from policy/), or of the tests;
  - a file of policy/ includes anything of kernels/ outside kernels/common/: the policy decides
    from the call, the settings and the facts a scan returns, and reads no matrix itself;
  - a file of kernels/isa/ includes anything of kernels/driver/: an instruction set's kernels
    serve the driver, never the other way round;
  - a layer's CMakeLists.txt links the library of a layer above it;
  - the project's own #include graph has a cycle, counting a .cc file and its header as one
    node;
  - with --libs KERNELS.a POLICY.a: a function of kernels/ calls one of policy/ (an undefined
    symbol of the kernels' archive that the policy's defines), or policy/ calls any function of
    kernels/ (so no callback of the policy's can reach the kernels either: the policy has
    nothing to hand one to).

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


def walk(root, layer):
    """Every file of a layer, as a path relative to the source root."""
    for folder, _, names in os.walk(os.path.join(root, layer)):
        for name in sorted(names):
            yield os.path.relpath(os.path.join(folder, name), root)


def include_problems(rel, inc, layer_index):
    """What is wrong with file `rel` (in LAYERS[layer_index]) including `inc`."""
    layer = LAYERS[layer_index]
    top = inc.split("/")[0]
    if top in LAYERS[layer_index + 1:] + ["tests"]:
        return ["%s includes \"%s\", a layer above" % (rel, inc)]
    if layer == "policy" and top == "kernels" and not inc.startswith("kernels/common/"):
        return ["%s includes \"%s\": policy/ reads no matrix (only kernels/common/)" % (rel, inc)]
    if rel.startswith("kernels/isa/") and inc.startswith("kernels/driver/"):
        return ["%s includes \"%s\": kernels/isa/ never includes kernels/driver/" % (rel, inc)]
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
            for inc in INCLUDE.findall(open(path).read()):
                problems += include_problems(rel, inc, layer_index)
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
        calls_checked = True

    for p in problems:
        print("check_layers: " + p)
    if not problems:
        print("check_layers: %d modules with includes, arrows only downward, no include cycle%s"
              % (len(graph), "; no call from kernels/ into policy/ or back" if calls_checked else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

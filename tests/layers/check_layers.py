#!/usr/bin/python3
"""Checks that the library's layers point only downward: shim -> policy -> kernels.

Fails (exit 1, one line per violation) when
  - a file in a layer includes a header of a layer above it ("policy/" or "shim/" from
    kernels/, "shim/" from policy/), or of the tests;
  - a layer's CMakeLists.txt links the library of a layer above it;
  - the project's own #include graph has a cycle (e.g. shim/config.cc and shim/log.cc
    including each other's headers), counting a .cc file and its header as one node.

Usage: check_layers.py SOURCE_DIR
"""
import os
import re
import sys

LAYERS = ["kernels", "policy", "shim"]  # bottom to top
LIBRARY = {"kernels": "amxblas_kernels", "policy": "amxblas_policy", "shim": "amxblas_shim"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(root):
    problems = []
    graph = {}  # node (path without extension) -> set of nodes it includes
    for layer_index, layer in enumerate(LAYERS):
        above = LAYERS[layer_index + 1:] + ["tests"]
        folder = os.path.join(root, layer)
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name == "CMakeLists.txt":
                text = open(path).read()
                for link in re.findall(r"target_link_libraries\(([^)]*)\)", text):
                    for upper in LAYERS[layer_index + 1:]:
                        if re.search(r"\b%s\b" % LIBRARY[upper], link):
                            problems.append("%s/CMakeLists.txt links %s, a layer above"
                                            % (layer, LIBRARY[upper]))
                continue
            if not name.endswith((".h", ".cc", ".def")):
                continue
            node = os.path.splitext(layer + "/" + name)[0]
            for inc in INCLUDE.findall(open(path).read()):
                top = inc.split("/")[0]
                if top in above:
                    problems.append("%s/%s includes \"%s\", a layer above" % (layer, name, inc))
                if top in LAYERS:
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

    for p in problems:
        print("check_layers: " + p)
    if not problems:
        print("check_layers: %d modules with includes, arrows only downward, no include cycle"
              % sum(1 for _ in graph))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

#!/bin/sh
# The layering check can fail: on a copy of the layers' folders, each violation it must catch,
# one at a time, has to make check_layers.py exit 1 with a line naming it.
#   check_catches.sh SOURCE_DIR
set -eu
src=$1
check=$src/tests/layers/check_layers.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expect_caught() {  # FILE LINE WHAT: append LINE to FILE of a fresh copy; the check must say WHAT
    rm -rf "$work/tree"
    mkdir -p "$work/tree"
    cp -r "$src/kernels" "$src/policy" "$src/shim" "$work/tree/"
    printf '%s\n' "$2" >> "$work/tree/$1"
    if out=$(python3 "$check" "$work/tree"); then
        echo "check_catches: not caught: '$2' in $1"; exit 1
    fi
    echo "$out" | grep -q "$3" || { echo "check_catches: wrong message for '$2' in $1: $out"; exit 1; }
    echo "caught: $1: $2"
}

python3 "$check" "$src" > /dev/null || { echo "check_catches: the real tree fails already"; exit 1; }
expect_caught kernels/bf16/fp64_gemm.cc '#include "policy/route.h"' 'a layer above'
expect_caught kernels/runtime/workspace.cc '#include "shim/log.h"' 'a layer above'
expect_caught policy/route.cc '#include "kernels/scan/operand_scan.h"' 'reads no matrix'
expect_caught kernels/isa/split.cc '#include "kernels/bf16/emulated_gemm.h"' 'never includes kernels/driver'
expect_caught policy/CMakeLists.txt 'target_link_libraries(amxblas_policy PUBLIC amxblas_shim)' 'a layer above'
expect_caught kernels/isa/pack_gather.h '#include "kernels/isa/split.h"' 'include cycle'
echo "check_catches: every violation caught"

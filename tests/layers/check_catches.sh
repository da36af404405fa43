#!/bin/sh
# The layering check can fail: on a copy of the layers' folders, each violation it must catch,
# one at a time, has to make check_layers.py exit 1 with a line naming it.
#   check_catches.sh SOURCE_DIR
set -eu
src=$1
check=$src/tests/layers/check_layers.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fresh_tree() {
    rm -rf "$work/tree"
    mkdir -p "$work/tree"
    cp -r "$src/kernels" "$src/policy" "$src/shim" "$work/tree/"
}

expect_caught() {  # FILE LINE WHAT: append LINE to FILE of a fresh copy; the check must say WHAT
    fresh_tree
    mkdir -p "$(dirname "$work/tree/$1")"
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
expect_caught policy/CMakeLists.txt 'target_link_libraries(amxblas_policy PUBLIC amxblas_shim)' 'a layer above'
expect_caught kernels/isa/pack_gather.h '#include "kernels/isa/split.h"' 'include cycle'
# The order of kernels/'s folders: a folder above, a sibling engine, a folder the order lacks.
expect_caught kernels/isa/split.h '#include "kernels/driver/routed_gemm.h"' 'kernels/driver/ is above kernels/isa/'
expect_caught kernels/runtime/workspace.cc '#include "kernels/pack/pack.h"' 'kernels/pack/ is above kernels/runtime/'
expect_caught kernels/engine/gemm_call.cc '#include "kernels/int8/int8_gemm.h"' 'kernels/int8/ is above kernels/engine/'
expect_caught kernels/int8/int8_gemm.cc '#include "kernels/bf16/emulated_gemm.h"' 'kernels/int8/ and kernels/bf16/ are siblings'
expect_caught kernels/extra/extra.h '#include "kernels/common/gemm_types.h"' 'does not name'
expect_caught shim/config.cc '#include "kernels/int8/crt_basis.h"' 'reaches the engines only through'

# The order on calls, from an archive's symbols: an object of kernels/pack/ calling a function
# defined in kernels/driver/, with no include to show it (a declaration of its own).
if command -v c++ > /dev/null && command -v ar > /dev/null; then
    fresh_tree
    printf 'namespace amxblas::kernels { int planted_driver() { return 1; } }\n' > "$work/tree/kernels/driver/planted_driver.cc"
    printf 'namespace amxblas::kernels { int planted_driver(); int planted_pack() { return planted_driver(); } }\n' \
        > "$work/tree/kernels/pack/planted_pack.cc"
    printf 'namespace amxblas { int planted_policy() { return 2; } }\n' > "$work/policy.cc"
    (cd "$work" && c++ -c tree/kernels/driver/planted_driver.cc -o planted_driver.cc.o &&
        c++ -c tree/kernels/pack/planted_pack.cc -o planted_pack.cc.o && c++ -c policy.cc -o policy.cc.o &&
        ar rcs kernels.a planted_driver.cc.o planted_pack.cc.o && ar rcs policy.a policy.cc.o)
    if out=$(python3 "$check" "$work/tree" --libs "$work/kernels.a" "$work/policy.a"); then
        echo "check_catches: not caught: kernels/pack/ calling kernels/driver/"; exit 1
    fi
    echo "$out" | grep -q 'kernels/pack/planted_pack.cc calls amxblas::kernels::planted_driver(), a function of kernels/driver/' ||
        { echo "check_catches: wrong message for kernels/pack/ calling kernels/driver/: $out"; exit 1; }
    echo "caught: kernels/pack/planted_pack.cc calls a function of kernels/driver/"
fi
echo "check_catches: every violation caught"

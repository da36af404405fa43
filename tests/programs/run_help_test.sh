#!/bin/sh
# amxblas-run: --help documents every option, bad usage exits 2 with a clear message, and a
# run sets LD_PRELOAD (prepended, not clobbered) and the AMXBLAS_* variables.
# Usage: run_help_test.sh AMXBLAS_RUN LIBRARY
set -eu
. "$(dirname "$0")/lib.sh"
run=$1
export AMXBLAS_LIBRARY=$2

help=$("$run" --help) || fail "--help exited $?"
for opt in --fp64-products --fp64-engine --fp32 --verbose --log --backend --min-n --shapes --threads \
           --print-library --help; do
    printf '%s\n' "$help" | grep -q -- "$opt" || fail "--help does not mention $opt"
done
echo "ok: --help mentions every option"
# It names every routine the library takes over, as shim/routines.def lists them (issue 48:
# it named sgemm_ and dgemm_ only): the LP64 names; the _64 twins are named as a family.
routines=$(sed -n 's/^AMXBLAS_\(FORTRAN\|CBLAS\)_GEMM(\([a-z_]*\), *[a-z]*, *int32_t).*/\2/p' \
    "$(dirname "$0")/../../shim/routines.def")
[ -n "$routines" ] || fail "no routines read from shim/routines.def"
for routine in $routines; do
    printf '%s\n' "$help" | grep -qw -- "$routine" || fail "--help does not name $routine"
done
printf '%s\n' "$help" | grep -q -- "_64" || fail "--help does not name the _64 twins"
echo "ok: --help names every routine of shim/routines.def: $(echo $routines)"

# expect_usage_error EXPECTED-TEXT ARGS...: exit status 2 and EXPECTED-TEXT on stderr.
expect_usage_error() {
    want=$1
    shift
    status=0
    err=$("$run" "$@" 2>&1 >/dev/null) || status=$?
    [ "$status" -eq 2 ] || fail "amxblas-run $* exited $status, not 2"
    printf '%s\n' "$err" | grep -q -- "$want" || fail "amxblas-run $*: message was: $err"
    echo "ok: amxblas-run $* -> exit 2: $(printf '%s\n' "$err" | head -1)"
}
expect_usage_error "unknown option '--no-such-option'" --no-such-option -- true
expect_usage_error "invalid value '7' for --fp64-products" --fp64-products 7 -- true
expect_usage_error "invalid value 'fp16' for --fp64-engine" --fp64-engine fp16 -- true
# The counts depend on the engine, given before or after --fp64-products: INT8's moduli are no
# BF16 products, and BF16's 21 is no count of moduli.
expect_usage_error "invalid value '12' for --fp64-products" --fp64-products 12 -- true
expect_usage_error "invalid value '12' for --fp64-products" --fp64-engine bf16 --fp64-products 12 -- true
expect_usage_error "invalid value '28' for --fp64-products" --fp64-products 28 --fp64-engine int8 -- true
expect_usage_error "invalid value '25' for --fp64-products" --fp64-engine int8 --fp64-products 25 -- true
expect_usage_error "invalid value 'maybe' for --fp32" --fp32=maybe -- true
expect_usage_error "invalid value 'fast' for --backend" --backend fast -- true
expect_usage_error "invalid value '0' for --min-n" --min-n 0 -- true
expect_usage_error "invalid value 'tall' for --shapes" --shapes tall -- true
expect_usage_error "option --log needs a value" --log
expect_usage_error "no program given" --verbose 1

[ "$("$run" --print-library)" = "$AMXBLAS_LIBRARY" ] || fail "--print-library"

env_out=$(LD_PRELOAD=libm.so.6 AMXBLAS_SHAPES=any "$run" --fp64-products 10 --fp32 off \
    --backend reference --min-n 64 --log /dev/null --threads 3 -- env)
for want in "LD_PRELOAD=$AMXBLAS_LIBRARY:libm.so.6" AMXBLAS_FP64_PRODUCTS=10 AMXBLAS_FP32=0 \
            AMXBLAS_BACKEND=reference AMXBLAS_MIN_N=64 AMXBLAS_LOG=/dev/null \
            AMXBLAS_VERBOSE=2 AMXBLAS_NUM_THREADS=3 AMXBLAS_SHAPES=any; do
    printf '%s\n' "$env_out" | grep -qx -- "$want" || fail "the program's environment lacks $want"
done
echo "ok: the program runs with LD_PRELOAD prepended and the AMXBLAS_* variables set"

# --fp32 takes what AMXBLAS_FP32 takes (issue 48, item 5): on/off, yes/no, true/false, 1/0, in
# any case, and passes 1 or 0 on.
for pair in on:1 off:0 yes:1 no:0 true:1 false:0 1:1 0:0 ON:1 Off:0 YES:1 False:0; do
    env_out=$("$run" --fp32 "${pair%%:*}" -- env) || fail "--fp32 ${pair%%:*} refused"
    printf '%s\n' "$env_out" | grep -qx "AMXBLAS_FP32=${pair#*:}" || fail "--fp32 ${pair%%:*} did not set AMXBLAS_FP32=${pair#*:}"
done
echo "ok: --fp32 takes on/off, yes/no, true/false and 1/0 in any case, as AMXBLAS_FP32 does"

env_out=$("$run" --fp64-products 12 --fp64-engine int8 -- env)
for want in AMXBLAS_FP64_PRODUCTS=12 AMXBLAS_FP64_ENGINE=int8; do
    printf '%s\n' "$env_out" | grep -qx -- "$want" || fail "the program's environment lacks $want"
done
env_out=$(AMXBLAS_FP64_ENGINE=int8 "$run" --fp64-products 6 -- env)
printf '%s\n' "$env_out" | grep -qx AMXBLAS_FP64_PRODUCTS=6 || fail "AMXBLAS_FP64_ENGINE=int8 from the environment"
# The launcher's INT8 counts are the engine's: its row of kernels/common/engines.def.
engines=$(dirname "$0")/../../kernels/common/engines.def
lo=$(sed -n 's/^AMXBLAS_FP64_ENGINE(int8, *\([0-9]*\), *[0-9]*,.*/\1/p' "$engines")
hi=$(sed -n 's/^AMXBLAS_FP64_ENGINE(int8, *[0-9]*, *\([0-9]*\),.*/\1/p' "$engines")
[ -n "$lo" ] && [ -n "$hi" ] || fail "no int8 row in $engines"
for count in $(seq "$lo" "$hi"); do
    "$run" --fp64-engine int8 --fp64-products "$count" -- true || fail "--fp64-products $count refused under int8"
done
expect_usage_error "invalid value '$((lo - 1))' for --fp64-products" --fp64-engine int8 --fp64-products $((lo - 1)) -- true
expect_usage_error "invalid value '$((hi + 1))' for --fp64-products" --fp64-engine int8 --fp64-products $((hi + 1)) -- true
echo "ok: --fp64-engine, and --fp64-products's counts per engine"

# OPENBLAS_THREAD_TIMEOUT: 16 unless the caller set it, then the caller's value.
env_out=$(env -u OPENBLAS_THREAD_TIMEOUT "$run" -- env)
printf '%s\n' "$env_out" | grep -qx OPENBLAS_THREAD_TIMEOUT=16 || fail "OPENBLAS_THREAD_TIMEOUT is not 16 by default"
env_out=$(OPENBLAS_THREAD_TIMEOUT=28 "$run" -- env)
printf '%s\n' "$env_out" | grep -qx OPENBLAS_THREAD_TIMEOUT=28 || fail "the caller's OPENBLAS_THREAD_TIMEOUT was not kept"
echo "ok: OPENBLAS_THREAD_TIMEOUT is 16 unless set, and a value already set is kept"

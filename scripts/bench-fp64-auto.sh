#!/bin/sh
# bench-fp64-auto.sh: the AMXBLAS_FP64_PRODUCTS=auto targets of issue 11 that need timing or an
# exact reference. Runs bench/amxblas_bench_fp64_auto, which prints, with PASS/MISS lines:
#   - log-uniform (2^-20..2^20) and cancellation inputs (and uniform), N = 1024: the max
#     entrywise error of auto against an exact reference (__float128 on sampled entries), over
#     OpenBLAS DGEMM's (target <= 2x);
#   - uniform N = 2048 (or each of --cost-n "N ..."): the products auto picks (target <= 21) and
#     its certificate's share of the routed call (target <= 10%), on the given backend and in
#     the AMX model (the extra product as tile work, the per-entry test as measured here).
# The netlib testers under auto and the bitwise checks are ctest tests (shim.netlib.*.auto*,
# kernels_certificate_test). Measures; asserts nothing (exit 0 unless the run fails).
#
#   scripts/bench-fp64-auto.sh --driver PATH [--n N] [--cost-n "N ..."] [--threads T] [--reps R]
#                              [--backend avx512|reference] [--quick]
set -eu
driver='' n=1024 cost_n=2048 threads=2 reps=3 backend=avx512 sample=2048
while [ $# -gt 0 ]; do
    case "$1" in
        --driver) driver=$2; shift ;;
        --n) n=$2; shift ;;
        --cost-n) cost_n=$2; shift ;;
        --threads) threads=$2; shift ;;
        --reps) reps=$2; shift ;;
        --backend) backend=$2; shift ;;
        --quick) n=128 cost_n=256 reps=1 sample=64 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "bench-fp64-auto.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$driver" ] || { echo "bench-fp64-auto.sh: --driver amxblas_bench_fp64_auto is required" >&2; exit 2; }
exec "$driver" --n "$n" --cost-n "$cost_n" --threads "$threads" --reps "$reps" --sample "$sample" --backend "$backend"

#!/bin/sh
# Debian's NumPy: A @ B in float32, float64, complex64 and complex128 is routed (cblas_sgemm
# and cblas_cgemm -> fp32, cblas_dgemm and cblas_zgemm -> fp64-21) and agrees with the
# result of a process without the library (relative errors printed).
# Usage: numpy_test.sh AMXBLAS_RUN LIBRARY NUMPY_SCRIPT OUTDIR N
set -eu
. "$(dirname "$0")/lib.sh"
numpy_setup "$@"

env -u LD_PRELOAD "$py" "$script" reference "$out" "$n"
"$run" --backend "$backend" --shapes square --fp64-products 21 --fp32 on --verbose 2 --log "$out/numpy.log" \
    -- "$py" "$script" preloaded "$out" "$n"
expect_routed "$out/numpy.log" cblas_sgemm "$n" fp32
expect_routed "$out/numpy.log" cblas_dgemm "$n" fp64-21
expect_routed "$out/numpy.log" cblas_cgemm "$n" fp32
expect_routed "$out/numpy.log" cblas_zgemm "$n" fp64-21
env -u LD_PRELOAD "$py" "$script" compare "$out" "$n"

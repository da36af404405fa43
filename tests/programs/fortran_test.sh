#!/bin/sh
# A Fortran 90 program linked with -lblas only: its DGEMM and SGEMM results are right under
# the library (the program checks them against a triple loop) and the log shows them routed.
# Usage: fortran_test.sh AMXBLAS_RUN LIBRARY GEMM_CHECK OUTDIR N
set -eu
. "$(dirname "$0")/lib.sh"
run=$1 exe=$3 out=$4 n=$5
export AMXBLAS_LIBRARY=$2
fresh_dir "$out"
backend=$(test_backend)

"$run" --backend "$backend" --shapes square --fp64-products 21 --fp32 on --verbose 2 --log "$out/fortran.log" \
    -- "$exe" "$n" || fail "gemm_check failed under the library"
expect_routed "$out/fortran.log" dgemm_ "$n" fp64-21
expect_routed "$out/fortran.log" sgemm_ "$n" fp32

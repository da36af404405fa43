#!/bin/sh
# ScaLAPACK's PDGEMM on 2 MPI ranks, each started through amxblas-run with a log per rank
# (%r): the distributed result is right and each rank's local DGEMM calls are routed.
# Usage: pdgemm_test.sh AMXBLAS_RUN LIBRARY PDGEMM_CHECK OUTDIR N NB MIN_N [PRODUCTS]
# PRODUCTS: --fp64-products (21, the default, or auto: then each routed call takes the route
# of the engine and product count it picked, fp64-N on BF16 or fp64-int8 on INT8 under the
# default engine, and logs engine= products=).
set -eu
. "$(dirname "$0")/lib.sh"
run=$1 exe=$3 out=$4 n=$5 nb=$6 min_n=$7 products=${8:-21}
export AMXBLAS_LIBRARY=$2
command -v mpirun >/dev/null || skip "mpirun not found (Debian package openmpi-bin)"
fresh_dir "$out"
backend=$(test_backend)

# Root is allowed to run mpirun here (the tests run as root in CI); one thread per rank on
# the real BLAS and the emulation, so two ranks share the cores without oversubscribing them.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# PBLAS splits PDGEMM into local calls m = N, n = N/2 (one column block per rank), k = its
# panel width (32, from pilaenv): not square and k below the default AMXBLAS_MIN_N, hence
# --shapes any and --min-n MIN_N.
mpirun --oversubscribe --allow-run-as-root -np 2 \
    "$run" --backend "$backend" --fp64-products "$products" --shapes any --min-n "$min_n" --verbose 2 \
    --log "$out/pdgemm.%r.log" -- "$exe" "$n" "$nb" || fail "pdgemm_check failed under the library"

for rank in 0 1; do
    log=$out/pdgemm.$rank.log
    [ -f "$log" ] || fail "rank $rank wrote no log $log"
    if [ "$products" = auto ]; then
        routed=$(grep -c -E 'amxblas: routine=dgemm_ .* route=fp64-([0-9]+|int8) .* engine=(bf16|int8) products=[0-9]+ ' "$log" || true)
    else
        routed=$(grep -c "amxblas: routine=dgemm_ .* route=fp64-$products " "$log" || true)
    fi
    [ "$routed" -gt 0 ] || fail "rank $rank routed no dgemm_ call; its log has:
$(grep 'amxblas: ' "$log" | head -20)"
    # Calls below --min-n may be forwarded; nothing else may.
    bad=$(grep 'amxblas: routine=dgemm_ .* route=forward ' "$log" | grep -v 'reason=size:' || true)
    [ -z "$bad" ] || fail "rank $rank forwarded dgemm_ calls it should have routed:
$bad"
    echo "ok: rank $rank: $routed dgemm_ call(s) routed with --fp64-products $products ($log)"
done

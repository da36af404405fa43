#!/bin/sh
# Issue 27, item 9: under mpirun with 2 ranks and AMXBLAS_VERBOSE=1, the rank that calls
# MPI_Abort (rank 1) and the rank mpirun then ends (rank 0) each write their summary, with the
# 3 calls each made, in their own log (%r).
# Usage: mpi_abort_test.sh LIBRARY ABORT_CHECK OUTDIR
set -u
. "$(dirname "$0")/lib.sh"
lib=$1 exe=$2 out=$3
command -v mpirun >/dev/null || skip "mpirun not found (Debian package openmpi-bin)"
fresh_dir "$out"
# Root may run mpirun here (the tests run as root in CI); one thread per rank.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
timeout 120 mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$lib" -x AMXBLAS_VERBOSE=1 \
    -x AMXBLAS_LOG="$out/abort.%r.log" "$exe" >"$out/output" 2>&1
rc=$?
cat "$out/output"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "mpirun exited with status $rc; MPI_Abort should end the job with an error"
for rank in 1 0; do
    log=$out/abort.$rank.log
    got=$(grep -c -E '^amxblas: summary pid=[0-9]+ calls=3 routed=0 scaled=0 forwarded=3$' "$log" 2>/dev/null)
    [ "${got:-0}" = 1 ] || fail "rank $rank wrote ${got:-no} summary of its 3 calls (expected 1) in $log:
$(cat "$log" 2>/dev/null)"
    echo "ok: rank $rank: $(head -1 "$log")"
done

#!/bin/sh
# Python multiprocessing with the fork start method after a routed NumPy matmul (issue 14):
# the parent and each of 4 forked children run a routed float32 A @ B to the end, exactly, with
# every configured thread (threads=2, no note=). AMXBLAS_LOG has %p, so each process writes its
# own log. Under `timeout`: the old failure was a child that never returned.
# Usage: numpy_fork_test.sh AMXBLAS_RUN LIBRARY NUMPY_FORK_SCRIPT OUTDIR N
set -eu
. "$(dirname "$0")/lib.sh"
numpy_setup "$@"

timeout 300 "$run" --backend "$backend" --shapes square --fp32 on --threads 2 --verbose 2 --log "$out/numpy.%p.log" \
    -- "$py" "$script" "$n" || fail "the program failed or timed out (status $?)"
routed="amxblas: routine=cblas_sgemm .* m=$n n=$n k=$n .*route=fp32 backend=$backend threads=2 time_us="
logs=$(grep -l -E "$routed" "$out"/numpy.*.log | wc -l)
[ "$logs" -eq 5 ] || fail "$logs processes logged a routed call with threads=2, expected 5 (parent and 4 children)"
! grep -h "note=" "$out"/numpy.*.log || fail "a call got fewer threads than configured"
parent_calls=$(grep -h -c -E "$routed" "$out"/numpy.*.log | sort -n | tail -1)
[ "$parent_calls" -eq 2 ] || fail "the parent logged $parent_calls routed calls, expected 2"
echo "ok: parent and 4 forked children each ran a routed call with threads=2"

#!/bin/sh
# amxblas-report on the per-rank logs of the PDGEMM test: the table adds up both ranks and
# shows the route they took.
# Usage: report_test.sh AMXBLAS_REPORT OUTDIR
set -eu
. "$(dirname "$0")/lib.sh"
report=$1 out=$2
[ -f "$out/pdgemm.0.log" ] && [ -f "$out/pdgemm.1.log" ] || fail "no logs of the PDGEMM test in $out"
table=$("$report" --files "$out"/pdgemm.0.log "$out"/pdgemm.1.log) || fail "amxblas-report exited $?"
printf '%s\n' "$table"
printf '%s\n' "$table" | grep -q '^amxblas report: 2 log file(s)' || fail "the header does not count 2 files"
printf '%s\n' "$table" | grep -Eq '^dgemm_ +fp64-21 +[1-9]' || fail "no dgemm_ fp64-21 row"

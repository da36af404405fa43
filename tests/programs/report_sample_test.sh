#!/bin/sh
# amxblas-report on fixed logs: one with per-call lines (and the summary VERBOSE=2 appends,
# which must not be counted twice), one with summary lines only. The table must be exactly
# data/expected-report.txt; --plot writes a PNG when gnuplot or matplotlib is there.
# Usage: report_sample_test.sh AMXBLAS_REPORT DATA_DIR OUTDIR
set -eu
. "$(dirname "$0")/lib.sh"
report=$1 data=$2 out=$3
fresh_dir "$out"

cd "$data"
"$report" --files percall.log summary.log > "$out/report.txt" || fail "amxblas-report exited $?"
diff -u expected-report.txt "$out/report.txt" || fail "the table differs from $data/expected-report.txt"
echo "ok: the table of percall.log + summary.log is as expected"

status=0
"$report" "$out/report.txt" 2> "$out/empty.err" || status=$?
[ "$status" -eq 1 ] && grep -q 'no amxblas log lines' "$out/empty.err" ||
    fail "a file without amxblas lines gave exit $status: $(cat "$out/empty.err")"
status=0
"$report" "$out/no-such.log" 2> "$out/missing.err" || status=$?
[ "$status" -eq 2 ] || fail "a missing file gave exit $status: $(cat "$out/missing.err")"
echo "ok: no log lines -> exit 1, a missing file -> exit 2"

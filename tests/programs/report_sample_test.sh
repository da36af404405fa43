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

# A log appended to by two runs (issue 48, item 6): the report adds them up and says so, naming
# the processes whose summaries it holds; a log of one process says nothing of the kind (above).
{ cat percall.log; sed 's/pid=4242/pid=5151/' percall.log; } > "$out/two-runs.log"
"$report" "$out/two-runs.log" > "$out/two-runs.txt" || fail "amxblas-report exited $?"
grep -q "^amxblas report: 1 log file(s), 24 calls," "$out/two-runs.txt" ||
    fail "the two runs' calls are not added up: $(head -1 "$out/two-runs.txt")"
grep -qxF "  $out/two-runs.log: 2 processes wrote it (pids 4242 and 5151); the table counts them all: runs appended to one log add up (AMXBLAS_LOG=run.%p.log keeps them apart)" "$out/two-runs.txt" ||
    fail "the report does not say that two processes wrote the log: $(cat "$out/two-runs.txt")"
echo "ok: a log of two runs is added up, and the report says two processes wrote it"

status=0
"$report" "$out/report.txt" 2> "$out/empty.err" || status=$?
[ "$status" -eq 1 ] && grep -q 'no amxblas log lines' "$out/empty.err" ||
    fail "a file without amxblas lines gave exit $status: $(cat "$out/empty.err")"
status=0
"$report" "$out/no-such.log" 2> "$out/missing.err" || status=$?
[ "$status" -eq 2 ] || fail "a missing file gave exit $status: $(cat "$out/missing.err")"
echo "ok: no log lines -> exit 1, a missing file -> exit 2"

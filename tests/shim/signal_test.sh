#!/bin/bash
# The AMXBLAS_VERBOSE=1 summary survives SIGTERM, SIGINT and SIGHUP (issue 14), without changing
# how the signal ends the program: signal_program (see there) runs routed calls under the
# library, gets the signal mid-run, and its exit status and log are checked.
#   signal_test.sh LIB PROGRAM BACKEND [first-call]
# first-call: only the case of a signal during the process's first call (issue 27, item 13).
set -u
lib=$1 prog=$2 backend=$3 only=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# case NAME MODE SIGNAL EXPECTED_STATUS EXPECTED_SUMMARIES [OUTPUT_TEXT]
# (EXPECTED_SUMMARIES "many": more than one; $every: AMXBLAS_SUMMARY_EVERY, $delay: seconds
# between "ready" and the signal)
every=0 delay=0
case_() {
    local name=$1 mode=$2 sig=$3 want_rc=$4 want_summaries=$5 text=${6:-}
    local log=$work/$name.log out=$work/$name.out
    AMXBLAS_SUMMARY_EVERY=$every AMXBLAS_VERBOSE=1 AMXBLAS_LOG=$log AMXBLAS_BACKEND=$backend AMXBLAS_SHAPES=square AMXBLAS_NUM_THREADS=2 \
        LD_PRELOAD=$lib timeout 120 "$prog" "$mode" >"$out" 2>&1 &
    local pid=$!
    for _ in $(seq 600); do grep -q ready "$out" && break; sleep 0.1; done
    sleep "$delay"
    # The program's pid is timeout's child.
    local target
    target=$(pgrep -P "$pid" | head -1)
    kill -s "$sig" "${target:-$pid}"
    wait "$pid"
    local rc=$?
    local summaries rows
    if [ "$mode" = first-call ]; then
        # No call has ended: the summary counts none, and has no row.
        summaries=$(grep -c -E '^amxblas: summary pid=[0-9]+ calls=0 routed=0 scaled=0 forwarded=0$' "$log" 2>/dev/null)
        rows=$(grep -c -E '^amxblas: summary routine=' "$log" 2>/dev/null)
        rows=$(( ${rows:-0} + ${summaries:-0} ))
    else
        summaries=$(grep -c -E '^amxblas: summary pid=[0-9]+ calls=[1-9][0-9]* routed=[1-9]' "$log" 2>/dev/null)
        rows=$(grep -c -E '^amxblas: summary routine=sgemm_ route=fp32 calls=[1-9][0-9]* time_s=[0-9.]+ gflops=[0-9.]+$' "$log" 2>/dev/null)
    fi
    local ok=1
    [ "$rc" = "$want_rc" ] || { echo "$name: exit status $rc, expected $want_rc"; ok=0; }
    if [ "$want_summaries" = many ]; then
        [ "$summaries" -gt 1 ] && [ "$rows" = "$summaries" ] ||
            { echo "$name: $summaries summary headers and $rows rows, expected more than 1 of each"; ok=0; }
    else
        [ "$summaries" = "$want_summaries" ] || { echo "$name: $summaries summary headers, expected $want_summaries"; ok=0; }
        [ "$rows" = "$want_summaries" ] || { echo "$name: $rows summary rows, expected $want_summaries"; ok=0; }
    fi
    if [ -n "$text" ] && ! grep -q -F "$text" "$out"; then echo "$name: output lacks '$text'"; ok=0; fi
    if [ $ok = 1 ]; then
        echo "ok: $name (status $rc): $(head -1 "$log")"
    else
        echo "--- output:"; cat "$out"; echo "--- log:"; cat "$log" 2>/dev/null; failed=1
    fi
}

# timeout passes a signalled child's status on as 128 + the signal number.
if [ "$only" = first-call ]; then
    # SIGTERM 1 s into the first call (seconds long): the summary is written, calls=0.
    delay=1
    case_ first_call first-call TERM 143 1
    exit $failed
fi
case_ sigterm default TERM 143 1
case_ sigint default INT 130 1
case_ sighup default HUP 129 1
# The program's handler, installed first, still runs (and decides the status) after the summary.
case_ own_before own-before TERM 7 1 "program handler ran"
# A handler installed later replaces the library's: the program ends normally, the summary
# comes from exit.
case_ own_after own-after TERM 0 1 "stopped by the program's flag"
# An ignored SIGHUP stays ignored: the program finishes its calls.
case_ nohup ignore-hup HUP 0 1 "finished"
# AMXBLAS_SUMMARY_EVERY=1: cumulative summaries while the calls go on, then the last one at
# the signal; amxblas-report counts only the last one of the pid.
every=1 delay=2.5
case_ every default TERM 143 many
last=$(grep -E '^amxblas: summary pid=' "$work/every.log" | tail -1 | sed -E 's/.* calls=([0-9]+) .*/\1/')
reported=$(python3 "$(dirname "$0")/../../scripts/amxblas-report" "$work/every.log" |
           awk '$1 == "sgemm_" && $2 == "fp32" { print $3 }')
if [ "$reported" != "$last" ]; then
    echo "every: amxblas-report counts $reported calls, the last summary says $last"; failed=1
else
    echo "ok: amxblas-report counts the last summary: $reported calls"
fi
exit $failed

#!/bin/bash
# AMXBLAS_RECORD under LD_PRELOAD=libamxblas.so, routing forced on with
# AMXBLAS_FP64_PRODUCTS=auto; the recorded files are replayed with amxblas-replay.
# Usage: record_test.sh LIB PROGRAM REPLAY BACKEND MODE
#   uncertified  (PROGRAM: record_program) one file per call forwarded with accuracy:uncertified
#                and no other; each replays, without the library (the forwarded call ran on the
#                real BLAS), to the bits the program's call produced
#   all          (record_program) AMXBLAS_RECORD_ALL=1: one file per call, each replays under
#                the library with the same settings to the program's bits, routed, forwarded and
#                beta-scaled calls, all four routines and the row-major CBLAS call alike
#   cap          (record_program cap) AMXBLAS_RECORD_MAX_MB=1: the 2 MiB call and every later
#                one are not written, one warning in the log, at most 1 MiB written
#   unwritable   (record_program) AMXBLAS_RECORD=a missing folder: one warning (in the log with
#                AMXBLAS_VERBOSE=2, on stderr with 0), the program's results unchanged
#   threads      (threads_program) 4 threads, 40 calls, AMXBLAS_RECORD_ALL=1: 40 distinct files
#                named with the pid, every one well-formed
set -u
lib=$1 program=$2 replay=$3 backend=$4 mode=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/rec"
# The BF16 engine's auto: record_program's calls 1, 3 and 4 (K = 1) are the ones it cannot certify
# (docs/fp64-certificate.md, Section 7), which the INT8 engine's auto routes; the recorder needs
# calls that are forwarded for accuracy.
forced=(AMXBLAS_BACKEND="$backend" AMXBLAS_MIN_N=1 AMXBLAS_SHAPES=any AMXBLAS_FP64_PRODUCTS=auto
        AMXBLAS_FP64_ENGINE=bf16)
fail=0
problem() { echo "CHECK FAILED: $*"; fail=1; }
# The recorded files, in the order they were written (their per-process counter).
recorded() { (cd "$work/rec" && ls | sort -t. -k3,3n | sed "s|^|$work/rec/|"); }
checksums() { grep -o 'checksum=[0-9a-f]*' "$1" | sed 's/checksum=//'; }

# run_program OUTPUT [VAR=VALUE...] -- ARGS...: the program under the library, forced routing.
run_program() {
    local out=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${forced[@]}" AMXBLAS_VERBOSE=2 AMXBLAS_LOG="$work/log" "${envs[@]}" LD_PRELOAD="$lib" \
        "$program" "$@" > "$out" 2> "$work/stderr"
    local rc=$?
    cat "$out" "$work/stderr"
    [ $rc -eq 0 ] || problem "the program exited with $rc"
}

case $mode in
uncertified)
    run_program "$work/program" AMXBLAS_RECORD="$work/rec" --
    mapfile -t files < <(recorded)
    # The calls the log shows forwarded with accuracy:uncertified, by their number.
    mapfile -t wanted < <(grep '^amxblas: routine=' "$work/log" | grep -n 'reason=accuracy:uncertified' | cut -d: -f1)
    echo "log: ${#wanted[@]} calls forwarded with accuracy:uncertified (calls ${wanted[*]}); recorded: ${#files[@]}"
    [ ${#wanted[@]} -ge 3 ] || problem "expected at least 3 uncertified calls (a DGEMM, a row-major CBLAS, a ZGEMM)"
    [ ${#files[@]} -eq ${#wanted[@]} ] || problem "${#files[@]} files for ${#wanted[@]} uncertified calls"
    grep -q 'route=fp' "$work/log" || problem "no routed call: nothing shows that routed calls are not recorded"
    if [ ${#files[@]} -gt 0 ]; then
        "$replay" "${files[@]}" > "$work/replay" 2>&1 || problem "amxblas-replay failed on the recorded files"
        cat "$work/replay"
        mapfile -t got < <(checksums "$work/replay")
        for ((i = 0; i < ${#wanted[@]}; i++)); do
            want=$(sed -n "${wanted[$i]}p" "$work/program" | sed 's/.*checksum=//')
            [ "${got[$i]:-}" = "$want" ] ||
                problem "call ${wanted[$i]}: the replay of ${files[$i]##*/} gives ${got[$i]:-nothing}, the program got $want"
        done
    fi ;;
all)
    run_program "$work/program" AMXBLAS_RECORD="$work/rec" AMXBLAS_RECORD_ALL=1 --
    mapfile -t files < <(recorded)
    calls=$(grep -c '^amxblas: routine=' "$work/log")
    echo "log: $calls calls; recorded: ${#files[@]}"
    [ "${#files[@]}" -eq "$calls" ] || problem "${#files[@]} files for $calls calls"
    for r in 'route=fp32 ' 'route=fp64-' 'route=forward ' 'route=beta-scale '; do
        grep -q "$r" "$work/log" || problem "no call with $r: the test covers less than it says"
    done
    for f in sgemm dgemm cgemm zgemm; do
        ls "$work/rec" | grep -q "^$f" || problem "no $f file"
    done
    env "${forced[@]}" LD_PRELOAD="$lib" "$replay" "${files[@]}" > "$work/replay" 2>&1 ||
        problem "amxblas-replay failed on the recorded files"
    cat "$work/replay"
    diff <(checksums "$work/program") <(checksums "$work/replay") > "$work/diff" ||
        { problem "replayed results differ from the program's (program < > replay):"; cat "$work/diff"; } ;;
cap)
    run_program "$work/program" AMXBLAS_RECORD="$work/rec" AMXBLAS_RECORD_ALL=1 AMXBLAS_RECORD_MAX_MB=1 -- cap
    mapfile -t files < <(recorded)
    bytes=$(cat "${files[@]}" /dev/null | wc -c)
    echo "recorded: ${#files[@]} files, $bytes bytes"
    [ ${#files[@]} -eq 1 ] && [[ ${files[0]} == */dgemmNN8x8x8.* ]] ||
        problem "expected only the first 8 x 8 x 8 call's file, got: ${files[*]##*/}"
    [ "$bytes" -le 1048576 ] || problem "$bytes bytes written, over 1 MiB"
    [ "$(grep -c '^amxblas: warning: AMXBLAS_RECORD_MAX_MB=1 reached: this process wrote [0-9]* bytes to .* and records no more calls$' "$work/log")" -eq 1 ] ||
        problem "expected one warning line about AMXBLAS_RECORD_MAX_MB in the log"
    [ "$(grep -c 'warning' "$work/log")" -eq 1 ] || problem "more than one warning" ;;
unwritable)
    env "${forced[@]}" LD_PRELOAD="$lib" "$program" > "$work/unrecorded" 2>&1 || problem "the program failed"
    run_program "$work/program" AMXBLAS_RECORD="$work/missing/folder" AMXBLAS_RECORD_ALL=1 --
    cmp -s "$work/unrecorded" "$work/program" || problem "recording into a missing folder changed the results"
    warning="^amxblas: warning: AMXBLAS_RECORD=$work/missing/folder: cannot create $work/missing/folder/dgemmTN5x4x1\\.[0-9]*\\.0\\.gemm (No such file or directory); recording stops$"
    [ "$(grep -c "$warning" "$work/log")" -eq 1 ] && [ "$(grep -c warning "$work/log")" -eq 1 ] ||
        problem "expected one warning line in the log"
    # With logging off the warning still reaches the user, once, on stderr.
    env "${forced[@]}" LD_PRELOAD="$lib" AMXBLAS_RECORD="$work/missing/folder" AMXBLAS_RECORD_ALL=1 \
        "$program" > "$work/quiet" 2> "$work/quiet.err" || problem "the program failed with logging off"
    cat "$work/quiet.err"
    cmp -s "$work/unrecorded" "$work/quiet" || problem "the results changed with logging off"
    [ "$(grep -c "$warning" "$work/quiet.err")" -eq 1 ] && [ "$(wc -l < "$work/quiet.err")" -eq 1 ] ||
        problem "expected the one warning on stderr with logging off" ;;
threads)
    run_program "$work/program" AMXBLAS_RECORD="$work/rec" AMXBLAS_RECORD_ALL=1 -- 64
    mapfile -t files < <(recorded)
    pid_named=$(ls "$work/rec" | grep -c '^[ds]gemmNN64x64x64\.[0-9]*\.[0-9]*\.gemm$')
    echo "recorded: ${#files[@]} files, $pid_named named <routine>NN64x64x64.<pid>.<counter>.gemm"
    [ ${#files[@]} -eq 40 ] && [ "$pid_named" -eq 40 ] || problem "expected 40 files from 40 calls"
    [ "$(ls "$work/rec" | cut -d. -f2 | sort -u | wc -l)" -eq 1 ] || problem "the files name more than one pid"
    [ "$(ls "$work/rec" | cut -d. -f3 | sort -un | tr '\n' ' ')" = "$(seq -s ' ' 0 39) " ] ||
        problem "the counters are not 0 ... 39"
    "$replay" "${files[@]}" > "$work/replay" 2>&1 || { cat "$work/replay"; problem "a recorded file is malformed"; }
    [ "$(grep -c ' error=.* bound=.* checksum=' "$work/replay")" -eq 40 ] || problem "not every file replayed"
    # threads_program computes exact results (C = seed * B): every replay must be exact too.
    [ "$(grep -c ' error=0 bound=0 ' "$work/replay")" -eq 40 ] || problem "a replayed result is not exact" ;;
*)
    echo "record_test.sh: unknown mode $mode"; exit 2 ;;
esac
if [ $fail -ne 0 ] && [ -f "$work/log" ]; then
    echo "--- log"; cat "$work/log"
fi
exit $fail

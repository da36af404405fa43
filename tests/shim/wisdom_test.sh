#!/bin/bash
# Wisdom (shim/wisdom.h) under LD_PRELOAD, on tests/shim/gemm_program.c at 256 x 256 x 256 (12
# DGEMM and 12 SGEMM calls, each checked exactly), AMXBLAS_SHAPES=auto, FP64-21, the backend
# given, 2 threads:
#   planted   an entry for this very process (its key from amxblas-calibrate --print-key) whose
#             real BLAS runs at 1 kFLOP/s: the model predicts every call to gain and routes all
#             24; the log's note names the file; every result is still exact
#   slow      an entry whose phases take a second per step: every call forwarded, cost:no-gain
#   corrupt   a damaged file, and a FIFO: one warning on stderr, and the decisions, predictions
#             and results of the built-in constants (all forwarded, as without wisdom)
#   foreign   a well-formed file for another CPU: one warning naming why, the built-in decisions
#   settings  entries for this machine and BLAS with another thread count: no warning, the note says
#   missing   no AMXBLAS_WISDOM and no file at the per-user default: no warning, the note says so
#   calibrate amxblas-calibrate writes an entry that parses and replaces its own key on a second
#             run (one entry), keeps other keys, and refuses to overwrite a file that is not wisdom
# Usage: wisdom_test.sh PRELOAD_RUN LIB CALIBRATE PROGRAM BLAS BACKEND MODE
set -u
run=$1 lib=$2 calibrate=$3 program=$4 blas=$5 backend=$6 mode=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

export AMXBLAS_NUM_THREADS=2 AMXBLAS_BACKEND=$backend
key=$("$calibrate" --backend "$backend" --blas "$blas" --print-key) || fail "amxblas-calibrate --print-key"
printf '%s\n' "$key" | grep -q "^  blas-build " || fail "no key: $key"
# entry_with LINES...: a wisdom file of this process's key and the given constant lines.
entry_with() {
    printf 'amxblas-wisdom 1\n'
    printf '%s\n' "$key" | sed '$d'
    for line in "$@"; do printf '  %s\n' "$line"; done
    printf 'end\n'
}
common=(--env AMXBLAS_VERBOSE=2 --env AMXBLAS_FP64_PRODUCTS=21 --env AMXBLAS_SHAPES=auto --env AMXBLAS_NUM_THREADS=2
        --env AMXBLAS_BACKEND="$backend" --well-formed --output-has "24 passed, 0 failed")
forwarded_as_built_in=(--count "^amxblas: routine=.* route=forward reason=cost:no-gain predicted=0\\.[0-9]+x" 24
                       --count "^amxblas: note: cost model: the built-in constants " 1)

case $mode in
    planted)
        entry_with "blas-time sgemm 0 1000 0 0 0" "blas-time dgemm 0 1000 0 0 0" > "$work/wisdom"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/wisdom" \
            --count "^amxblas: routine=(sgemm_|cblas_sgemm) .*route=fp32 backend=$backend .* predicted=[0-9.]+x" 12 \
            --count "^amxblas: routine=(dgemm_|cblas_dgemm) .*route=fp64-21 backend=$backend .* predicted=[0-9.]+x" 12 \
            --count "^amxblas: note: cost model: the constants measured in wisdom $work/wisdom, " 1 \
            --output-lacks "warning" -- "$program" 256 256 256 ;;
    slow)
        entry_with "step_s_fp32 1" "step_s_fp64 1" "blas-time sgemm 0 1e6 0 0 0" "blas-time dgemm 0 1e6 0 0 0" > "$work/wisdom"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/wisdom" \
            --count "^amxblas: routine=.* route=forward reason=cost:no-gain predicted=0\\.[0-9]+x" 24 \
            --count "^amxblas: note: cost model: the constants measured in wisdom " 1 -- "$program" 256 256 256 ;;
    corrupt)
        # The planted file with one number out of its range: the whole file is refused.
        entry_with "blas-time sgemm 0 1000 0 0 0" "blas-time dgemm 0 -1000 0 0 0" > "$work/wisdom"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/wisdom" "${forwarded_as_built_in[@]}" \
            --output-count "amxblas: warning: wisdom $work/wisdom is not a valid wisdom file (line " 1 \
            --output-count "warning" 1 -- "$program" 256 256 256 || exit 1
        head -c 3000 /dev/urandom > "$work/wisdom"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/wisdom" "${forwarded_as_built_in[@]}" \
            --output-count "is not a valid wisdom file" 1 -- "$program" 256 256 256 || exit 1
        # A FIFO nobody writes: refused at once (not a regular file), never waited on.
        mkfifo "$work/fifo" || exit 1
        timeout 60 "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/fifo" "${forwarded_as_built_in[@]}" \
            --output-count "amxblas: warning: wisdom $work/fifo cannot be read (not a regular file)" 1 \
            -- "$program" 256 256 256 ;;
    foreign)
        entry_with "blas-time sgemm 0 1000 0 0 0" "blas-time dgemm 0 1000 0 0 0" |
            sed 's/^  cpu .*/  cpu AuthenticAMD family 26 model 2 stepping 0: another machine/' > "$work/wisdom"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/wisdom" "${forwarded_as_built_in[@]}" \
            --output-count "amxblas: warning: wisdom $work/wisdom has no entry for this process: its entries were measured on another CPU" 1 \
            --output-count "warning" 1 -- "$program" 256 256 256 ;;
    settings)
        # Entries for this machine and BLAS, but another thread count: no warning, the note says why.
        entry_with "blas-time sgemm 0 1000 0 0 0" | sed 's/^  threads 2$/  threads 7/' > "$work/wisdom"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$work/wisdom" "${forwarded_as_built_in[@]}" \
            --count "has no entry for this process: its entries are for another thread count" 1 \
            --output-lacks "warning" -- "$program" 256 256 256 ;;
    missing)
        mkdir -p "$work/home"
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM= --env HOME="$work/home" --env XDG_DATA_HOME= \
            "${forwarded_as_built_in[@]}" --count "no wisdom at ~/.local/share/amxblas/wisdom\\)" 1 \
            --output-lacks "warning" -- "$program" 256 256 256 ;;
    calibrate)
        out=$work/sub/wisdom
        "$calibrate" --backend "$backend" --blas "$blas" --out "$out" --rounds 1 > "$work/cal.out" || fail "calibrate: $(cat "$work/cal.out")"
        grep -q "^amxblas-wisdom 1$" "$out" || fail "no wisdom written"
        [ "$(grep -c '^entry$' "$out")" = 1 ] || fail "one entry expected"
        grep -q "^  blas-time dgemm " "$out" || fail "no real BLAS time: $(cat "$out")"
        sed 's/^  threads 2$/  threads 7/' "$out" > "$work/other" && sed -n '/^entry$/,/^end$/p' "$work/other" >> "$out"
        "$calibrate" --backend "$backend" --blas "$blas" --out "$out" --rounds 1 > "$work/cal.out" || fail "second calibrate"
        [ "$(grep -c '^entry$' "$out")" = 2 ] || fail "the entry for 7 threads was not kept, or ours not replaced: $(cat "$out")"
        grep -q "^  threads 7$" "$out" || fail "the other key was lost"
        # The file it wrote is used by a program with this key.
        "$run" "$lib" "${common[@]}" --env AMXBLAS_WISDOM="$out" --output-lacks "warning" \
            --count "^amxblas: note: cost model: the constants measured in wisdom $out, " 1 -- "$program" 256 256 256 || exit 1
        echo "not wisdom" > "$work/text"
        if "$calibrate" --backend "$backend" --blas "$blas" --out "$work/text" --rounds 1 > "$work/cal.out" 2>&1; then
            fail "a file that is not wisdom was overwritten"
        fi
        grep -q "is not a wisdom file" "$work/cal.out" || fail "no reason given: $(cat "$work/cal.out")"
        [ "$(cat "$work/text")" = "not wisdom" ] || fail "the file was changed"
        echo "ok: calibration writes, replaces its own entry, keeps others, refuses a foreign file" ;;
    *) fail "unknown mode $mode" ;;
esac

#!/bin/bash
# Replays captured GEMM calls (.gemm files) under LD_PRELOAD=libamxblas.so with the settings
# given, and checks what the library did with each against the exact result:
#   - a routed call (route=fp64-N in the log): every entry within its certified bound,
#     amxblas-replay's bound= at most 1 (|C - C_exact|_ij <= gamma_K |alpha| (|op(A)||op(B)|)_ij
#     + the alpha/beta update's rounding; ZGEMM per part with gamma_{K+1}; scripts/replay/accuracy.h);
#   - a forwarded call: a reason of the library's tables (policy/reasons.def,
#     kernels/common/reasons.def, all documented in docs/reasons.md), and C bit for bit the
#     result of the same call without the library (amxblas-replay's checksum=);
#   - AMXBLAS_RECORD: one file per call forwarded with accuracy:uncertified, byte for byte the
#     file it was replayed from (the captured files have tight leading dimensions, so the
#     recorder must write them back unchanged), and no other file.
#
#   - --fenv MODE: every call made under that floating-point environment (amxblas-replay --fenv),
#     the runs without the library too; a trap ends amxblas-replay, which fails the test; and no
#     call under the library raises invalid, divide-by-zero or overflow that the real BLAS's own
#     run of it does not (flags=).
#
# Usage: replay_captured.sh [--routed N] [--forwarded N] [--expect-violation] [--fenv MODE] LIB REPLAY
#                           SOURCE_DIR [VAR=VALUE...] -- FILE...
#   --routed N, --forwarded N  the calls the log must show routed and forwarded
#   --expect-violation         the settings are known to break the bound (a planted failure):
#                              pass only if some routed entry is beyond it
set -u
routed_want= forwarded_want= expect_violation=0 fenv=()
while [ $# -gt 0 ]; do
    case $1 in
        --fenv) fenv=(--fenv "$2"); shift 2 ;;
        --routed) routed_want=$2; shift 2 ;;
        --forwarded) forwarded_want=$2; shift 2 ;;
        --expect-violation) expect_violation=1; shift ;;
        *) break ;;
    esac
done
lib=$1 replay=$2 src=$3
shift 3
envs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
shift
files=("$@")
[ ${#files[@]} -gt 0 ] || { echo "replay_captured.sh: no files"; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/rec"
fail=0
problem() { echo "CHECK FAILED: $*"; fail=1; }

# The reasons the library gives: the first column of its two reason tables.
reasons=$(sed -n 's/^AMXBLAS_REASON([a-z0-9_]*, *"\([^"]*\)", *forward).*/\1/p' \
    "$src/policy/reasons.def" "$src/kernels/common/reasons.def")
[ -n "$reasons" ] || { echo "replay_captured.sh: no reasons in the tables under $src"; exit 2; }

# Without the library: the real BLAS's result of each call (and OpenBLAS's, through dlopen).
# Under --fenv traps it runs with the traps masked (--fenv nearest: the same rounding, its flags
# still read): OpenBLAS's kernels compute on lanes past the matrices and may trap there, which
# says nothing of the library.
plain_fenv=("${fenv[@]}")
[ "${fenv[1]:-}" = traps ] && plain_fenv=(--fenv nearest)
"$replay" --against-openblas "${plain_fenv[@]}" "${files[@]}" > "$work/plain" 2>&1 || {
    cat "$work/plain"; echo "CHECK FAILED: amxblas-replay without the library failed"; exit 1; }
env "${envs[@]}" AMXBLAS_VERBOSE=2 AMXBLAS_LOG="$work/log" AMXBLAS_RECORD="$work/rec" \
    LD_PRELOAD="$lib" "$replay" "${fenv[@]}" "${files[@]}" > "$work/out" 2>&1
rc=$?
cat "$work/out"
[ $rc -eq 0 ] || problem "amxblas-replay under the library exited with $rc"
grep -q "^amxblas-replay: dgemm_ is .*libamxblas" "$work/out" ||
    grep -q "^amxblas-replay: zgemm_ is .*libamxblas" "$work/out" ||
    problem "the replay's GEMMs did not resolve to the preloaded library"

grep -v '^amxblas-replay: ' "$work/plain" > "$work/plain.calls"
grep -v '^amxblas-replay: ' "$work/out" > "$work/out.calls"
grep '^amxblas: routine=' "$work/log" > "$work/log.calls"
n=${#files[@]}
for f in plain.calls out.calls log.calls; do
    got=$(wc -l < "$work/$f")
    [ "$got" -eq "$n" ] || problem "$f has $got lines for $n files"
done
grep -q ' openblas_checksum=[0-9a-f]\{16\}$' "$work/plain.calls" ||
    problem "--against-openblas printed no openblas_checksum="

field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
routed=0 forwarded=0 violations=0 uncertified=()
for ((i = 1; i <= n; i++)); do
    file=${files[$((i - 1))]}
    out=$(sed -n "${i}p" "$work/out.calls")
    plain=$(sed -n "${i}p" "$work/plain.calls")
    call=$(sed -n "${i}p" "$work/log.calls")
    name=$(basename "$file")
    for d in m n k; do
        [ "$(field $d "$out")" = "$(field $d "$call")" ] || problem "$name: log line $i is another call: $call"
    done
    if [ ${#fenv[@]} -gt 0 ] && [ "$(field flags "$out")" != none ] &&
        [ "$(field flags "$out")" != "$(field flags "$plain")" ]; then
        problem "$name: raised $(field flags "$out"), the real BLAS $(field flags "$plain")"
    fi
    route=$(field route "$call")
    case $route in
        fp64-*)
            routed=$((routed + 1))
            bound=$(field bound "$out")
            if ! awk -v b="$bound" 'BEGIN { exit !(b != "n/a" && b + 0 <= 1) }'; then
                violations=$((violations + 1))
                [ $expect_violation -eq 1 ] ||
                    problem "$name: routed ($route) with an entry beyond its certified bound: bound=$bound"
            fi ;;
        forward)
            forwarded=$((forwarded + 1))
            reason=$(field reason "$call")
            printf '%s\n' "$reasons" | grep -qx -- "$reason" || problem "$name: forwarded with reason '$reason', not in the reason tables"
            [ "$(field checksum "$out")" = "$(field checksum "$plain")" ] ||
                problem "$name: forwarded, but C differs from the real BLAS's own result"
            [ "$reason" = accuracy:uncertified ] && uncertified+=("$file") ;;
        *) problem "$name: route '$route' (expected fp64-N or forward)" ;;
    esac
done
echo "replay_captured.sh: $n calls: $routed routed, $forwarded forwarded (${#uncertified[@]} accuracy:uncertified), $violations routed beyond the bound"
[ -z "$routed_want" ] || [ "$routed" -eq "$routed_want" ] || problem "$routed calls routed, expected $routed_want"
[ -z "$forwarded_want" ] || [ "$forwarded" -eq "$forwarded_want" ] || problem "$forwarded calls forwarded, expected $forwarded_want"
if [ $expect_violation -eq 1 ]; then
    [ $violations -gt 0 ] || problem "no routed entry beyond its bound: the check would not catch one"
fi

# The recorded files, in the order of their counter, against the files forwarded for accuracy.
mapfile -t recorded < <(cd "$work/rec" && ls | sort -t. -k3,3n)
[ ${#recorded[@]} -eq ${#uncertified[@]} ] ||
    problem "AMXBLAS_RECORD wrote ${#recorded[@]} files for ${#uncertified[@]} calls forwarded with accuracy:uncertified"
for ((i = 0; i < ${#recorded[@]} && i < ${#uncertified[@]}; i++)); do
    cmp -s "$work/rec/${recorded[$i]}" "${uncertified[$i]}" ||
        problem "recorded ${recorded[$i]} differs from $(basename "${uncertified[$i]}"), the call it recorded"
done
if [ $fail -ne 0 ]; then
    echo "--- log"; cat "$work/log"
fi
exit $fail

#!/bin/bash
# Runs one program under LD_PRELOAD=libamxblas.so and checks what happened:
#   preload_run.sh LIB [options] -- PROGRAM ARGS...
# options:
#   --env NAME=VALUE      set a variable for the program (repeatable)
#   --rc N                expected exit status (default 0)
#   --count REGEX N       the log has exactly N lines matching the extended REGEX
#   --output-has TEXT     the program's stdout+stderr contains TEXT
#   --output-lacks TEXT   the program's stdout+stderr does not contain TEXT
#   --output-count TEXT N the program's stdout+stderr has exactly N lines containing TEXT
#   --no-files DIR        DIR, emptied before the run, holds no file after it
#   --well-formed         every log line is a whole, well-formed per-call, summary or note
#                         line (a routed FP64 call's engine= products=, auto's margin=
#                         repaired=, AMXBLAS_SHAPES=auto's predicted= and mispredicted=, route
#                         fp64-int8, the summary's products= and mispredicted= of its rows,
#                         and the cost model's note included)
# The log goes to a fresh file (AMXBLAS_LOG) unless --env AMXBLAS_LOG=... is given.
set -u
lib=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/amxblas.log
# No wisdom unless a test plants its own: the tests check the built-in cost model's decisions,
# whatever a developer's ~/.local/share/amxblas/wisdom holds (shim/wisdom.h).
envs=(AMXBLAS_LOG="$log" AMXBLAS_WISDOM=none)
rc_want=0
checks=()
while [ $# -gt 0 ]; do
    case $1 in
        --env) envs+=("$2"); shift 2 ;;
        --rc) rc_want=$2; shift 2 ;;
        --count) checks+=("count" "$2" "$3"); shift 3 ;;
        --output-has) checks+=("output" "$2" ""); shift 2 ;;
        --output-lacks) checks+=("nooutput" "$2" ""); shift 2 ;;
        --output-count) checks+=("outcount" "$2" "$3"); shift 3 ;;
        --well-formed) checks+=("wellformed" "" ""); shift ;;
        --no-files) checks+=("nofiles" "$2" ""); shift 2 ;;
        --) shift; break ;;
        *) echo "preload_run.sh: unknown option $1"; exit 2 ;;
    esac
done
for e in "${envs[@]}"; do case $e in AMXBLAS_LOG=*) log=${e#AMXBLAS_LOG=} ;; esac; done

for ((j = 0; j < ${#checks[@]}; j += 3)); do
    [ "${checks[$j]}" = nofiles ] && find "${checks[$((j + 1))]}" -mindepth 1 -delete
done
env "${envs[@]}" LD_PRELOAD="$lib" "$@" >"$work/out" 2>&1
rc=$?
cat "$work/out"
fail=0
if [ "$rc" != "$rc_want" ]; then echo "CHECK FAILED: exit status $rc, expected $rc_want"; fail=1; fi
touch "$log" 2>/dev/null
# The emulated routes' names: the variant table's route column.
variants=$(dirname "$0")/../../kernels/common/variants.def
routes=$(sed -n 's/^AMXBLAS_VARIANT([^,]*, *"\([^"]*\)".*/\1/p' "$variants" | paste -sd'|')
[ -n "$routes" ] || { echo "preload_run.sh: no routes in $variants"; exit 2; }
# The backends' names: the rows of the backend table.
backends=$(sed -n 's/^AMXBLAS_BACKEND(\([a-z0-9_]*\),.*/\1/p' "$(dirname "$0")/../../kernels/common/backends.def" | paste -sd'|')
[ -n "$backends" ] || { echo "preload_run.sh: no backends in kernels/common/backends.def"; exit 2; }
call_re='^amxblas: routine=[a-z_0-9]+ layout=(col|row|invalid) transa=[NTC?nt] transb=[NTC?nt] m=-?[0-9]+ n=-?[0-9]+ k=-?[0-9]+ lda=-?[0-9]+ ldb=-?[0-9]+ ldc=-?[0-9]+ route=((forward|beta-scale) reason=[a-z0-9-]+:[a-z0-9-]+|('"${routes}"'|fp64-int8) backend=('"${backends}"') threads=[0-9]+( note=threads:[a-z-]+)?( engine=(bf16|int8) products=[0-9]+( margin=([0-9.]+(e[+-][0-9]+)?|inf) repaired=[0-9]+)?)?)( predicted=[0-9.]+x( mispredicted=[0-9.]+(e-[0-9]+)?x)?)? time_us=[0-9.]+ gflops=[0-9.]+$'
outlook_re='^amxblas: note: no GEMM will be routed with these settings on this machine: .*[^ ]$'
# The cost model's note: which constants it uses (built in, or a wisdom file's).
model_note_re='^amxblas: note: cost model: .*[^ ]$'
summary_re='^amxblas: summary (pid=[0-9]+ calls=[0-9]+ routed=[0-9]+ scaled=[0-9]+ forwarded=[0-9]+|routine=[a-z_0-9]+ route=[a-z0-9-]+( products=[0-9]+)?( reason=[a-z0-9-]+:[a-z0-9-]+)? calls=[0-9]+ time_s=[0-9.]+ gflops=[0-9.]+( mispredicted=[0-9]+)?)$'
# The summary's note when its rows were full (the other calls are in its rows routine=other).
summary_note_re='^amxblas: note: the summary has [0-9]+ rows of \(routine, route, reason\); [0-9]+ calls of further combinations are counted in the rows routine=other$'
i=0
while [ $i -lt ${#checks[@]} ]; do
    kind=${checks[$i]} a=${checks[$((i + 1))]} b=${checks[$((i + 2))]}
    i=$((i + 3))
    case $kind in
        count)
            got=$(grep -c -E -- "$a" "$log")
            if [ "$got" != "$b" ]; then
                echo "CHECK FAILED: $got log lines match '$a', expected $b"; fail=1
            fi ;;
        output)
            if ! grep -q -F -- "$a" "$work/out"; then
                echo "CHECK FAILED: output lacks '$a'"; fail=1
            fi ;;
        nooutput)
            if grep -q -F -- "$a" "$work/out"; then
                echo "CHECK FAILED: output has '$a'"; fail=1
            fi ;;
        outcount)
            got=$(grep -c -F -- "$a" "$work/out")
            if [ "$got" != "$b" ]; then
                echo "CHECK FAILED: $got output lines contain '$a', expected $b"; fail=1
            fi ;;
        nofiles)
            if [ -n "$(find "$a" -type f | head -1)" ]; then
                echo "CHECK FAILED: files were written in $a:"; find "$a" -type f | head -5; fail=1
            fi ;;
        wellformed)
            bad=$(grep -v -E -e "$call_re" -e "$summary_re" -e "$outlook_re" -e "$summary_note_re" -e "$model_note_re" "$log" | head -5)
            if [ -n "$bad" ]; then
                echo "CHECK FAILED: malformed log lines:"; echo "$bad"; fail=1
            fi ;;
    esac
done
if [ $fail -ne 0 ]; then
    echo "--- log (first 40 lines)"; head -40 "$log"
fi
exit $fail

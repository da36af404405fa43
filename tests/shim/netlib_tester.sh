#!/bin/sh
# Runs one of the netlib Level-3 testers from Debian's libblas-test under LD_PRELOAD and
# checks that every routine it tests PASSED, and nothing FAILED.
#   netlib_tester.sh [--require-routed] [--max-ratio R] [--sizes "N..."] [--min-routed P]
#                    [--min-kernel P] LIB TESTER INPUT [NAME=VALUE...]
# --require-routed: also check that some GEMM calls took an emulation route (forced routing).
# --sizes "N...": run with these values of N instead of the input's.
# --min-routed P: at least P percent of the xGEMM calls with M, N, K >= 1 must not be
#   forwarded (routed, or ALPHA = 0 done by the library itself), as the log summary counts.
# --min-kernel P: at least P percent of those with ALPHA != 0 are routed to the kernels (the
#   stricter count: the ALPHA = 0 calls, which only scale C, are left out).
# --max-ratio R: accept a "SUSPECT" test ratio up to R (no FAIL, no other failure) instead of
#   the tester's threshold of 16. For the FP64 emulation: its error is bounded relative to
#   max|A| * max|B| (the split's exponent is per matrix), not to each (|A||B|)_ij, so the
#   tester's per-entry ratio exceeds 16 on its mixed-magnitude inputs (see docs/accuracy.md).
# Exits 77 (skipped) when the tester is not installed.
set -u
require_routed=0 max_ratio="" sizes="" min_routed="" min_kernel=""
while :; do
    case $1 in
        --require-routed) require_routed=1; shift ;;
        --max-ratio) max_ratio=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --min-routed) min_routed=$2; shift 2 ;;
        --min-kernel) min_kernel=$2; shift 2 ;;
        *) break ;;
    esac
done
lib=$1 tester=$2 input=$3
shift 3
if [ ! -x "$tester" ] || [ ! -r "$input" ]; then
    echo "SKIP: $tester not installed (Debian package libblas-test)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
if [ -n "$sizes" ]; then
    # The line after "NUMBER OF VALUES OF N" holds the values; both lines are replaced.
    count=$(echo $sizes | wc -w)
    awk -v n="$count" -v v="$sizes" '
        /NUMBER OF VALUES OF N/ { print n "                 NUMBER OF VALUES OF N"; getline; print v "       VALUES OF N"; next }
        { print }' "$input" >input.txt
    input=$work/input.txt
fi
env "$@" AMXBLAS_VERBOSE=1 AMXBLAS_LOG="$work/amxblas.log" LD_PRELOAD="$lib" "$tester" <"$input" >out.txt 2>&1
rc=$?
# The Fortran testers write their summary to the file named in their input; the C ones to
# stdout. Read whichever exists.
summary=$(sed -n "1s/^'\([^']*\)'.*/\1/p" "$input")
[ -n "$summary" ] && [ -f "$summary" ] && cat "$summary" >>out.txt
grep -E 'PASSED|COMPLETED|SUSPECT|FAIL|ERROR|NOT' out.txt | sed 's/^ *//'
passed=$(grep -c 'PASSED THE' out.txt)
bad=$(grep -c -E 'FAIL|SUSPECT|\*\*\*' out.txt)
if [ -n "$max_ratio" ]; then
    # Lines "******* BUT WITH MAXIMUM TEST RATIO  nnnn.nn - SUSPECT *******" within the bound
    # are accepted; a ratio too large to print ("********") or any other failure is not.
    accepted=$(sed -n 's/.*MAXIMUM TEST RATIO *\([0-9.]*\) - SUSPECT.*/\1/p' out.txt |
               awk -v max="$max_ratio" '$1 != "" && $1 + 0 <= max + 0 {n++} END {print n + 0}')
    echo "accepted $accepted SUSPECT ratio(s) <= $max_ratio"
    bad=$((bad - accepted))
fi
echo "--- amxblas summary"
grep 'summary' amxblas.log
if [ "$rc" -ne 0 ] || [ "$passed" -eq 0 ] || [ "$bad" -ne 0 ]; then
    echo "tester exit status $rc, $passed PASSED lines, $bad failure lines"
    cat out.txt | tail -40
    exit 1
fi
if [ $require_routed -eq 1 ] && ! grep -q 'summary routine=.* route=fp' amxblas.log; then
    echo "no call was routed, although routing was forced on"
    exit 1
fi
if [ -n "$min_routed$min_kernel" ]; then
    # Calls with M, N, K >= 1: all but args:invalid, args:nonstandard, size:empty and size:k-zero.
    awk -v min="${min_routed:-0}" -v min_kernel="${min_kernel:-0}" '
        / summary routine=/ {
            c = $0; sub(/.* calls=/, "", c); sub(/ .*/, "", c)
            if ($0 ~ /reason=(args:invalid|args:nonstandard|size:empty|size:k-zero)/) next
            all += c
            if ($0 ~ /route=forward/) fwd += c
            else if ($0 ~ /route=fp/) routed += c
        }
        END {
            kept = all - fwd
            printf "calls with M, N, K >= 1: %d; not forwarded %d (%.1f%%); routed to the kernels %d (%.1f%% of those with ALPHA != 0)\n",
                   all, kept, 100 * kept / all, routed, 100 * routed / (routed + fwd)
            if (100 * kept < min * all) { print "fewer than " min "% of the calls with M, N, K >= 1 were kept"; exit 1 }
            if (100 * routed < min_kernel * (routed + fwd)) {
                print "fewer than " min_kernel "% of the calls with M, N, K >= 1 and ALPHA != 0 were routed"; exit 1 }
        }' amxblas.log || exit 1
fi
echo "$passed passed, 0 failed"

#!/bin/sh
# Runs one of the netlib Level-3 testers from Debian's libblas-test under LD_PRELOAD and
# checks that every routine it tests PASSED, and nothing FAILED.
#   netlib_tester.sh [--require-routed] LIB TESTER INPUT [NAME=VALUE...]
# --require-routed: also check that some GEMM calls took an emulation route (forced routing).
# Exits 77 (skipped) when the tester is not installed.
set -u
require_routed=0
if [ "$1" = --require-routed ]; then require_routed=1; shift; fi
lib=$1 tester=$2 input=$3
shift 3
if [ ! -x "$tester" ] || [ ! -r "$input" ]; then
    echo "SKIP: $tester not installed (Debian package libblas-test)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
env "$@" AMXBLAS_VERBOSE=1 AMXBLAS_LOG="$work/amxblas.log" LD_PRELOAD="$lib" "$tester" <"$input" >out.txt 2>&1
rc=$?
# The Fortran testers write their summary to the file named in their input; the C ones to
# stdout. Read whichever exists.
summary=$(sed -n "1s/^'\([^']*\)'.*/\1/p" "$input")
[ -n "$summary" ] && [ -f "$summary" ] && cat "$summary" >>out.txt
grep -E 'PASSED|FAIL|ERROR|NOT' out.txt | sed 's/^ *//'
passed=$(grep -c 'PASSED THE' out.txt)
bad=$(grep -c -E 'FAIL|SUSPECT|\*\*\*' out.txt)
echo "--- amxblas summary"
grep 'summary' amxblas.log
if [ "$rc" -ne 0 ] || [ "$passed" -eq 0 ] || [ "$bad" -ne 0 ]; then
    echo "tester exit status $rc, $passed PASSED lines, $bad failure lines"
    cat out.txt | tail -40
    exit 1
fi
if [ $require_routed -eq 1 ] && ! grep -q 'summary routine=.* route=amx-' amxblas.log; then
    echo "no call was routed, although routing was forced on"
    exit 1
fi
echo "$passed passed, 0 failed"

#!/bin/sh
# The program prints the same with and without libamxblas.so preloaded (used for the xerbla
# messages of invalid calls, which must come from the real BLAS, unchanged).
#   compare_output.sh LIB PROGRAM ARGS...
set -u
lib=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$@" >"$work/plain" 2>&1; rc_plain=$?
LD_PRELOAD="$lib" AMXBLAS_VERBOSE=0 "$@" >"$work/preloaded" 2>&1; rc_pre=$?
cat "$work/preloaded"
if [ ! -s "$work/plain" ]; then echo "the program printed nothing: nothing to compare"; exit 1; fi
if [ $rc_plain -ne $rc_pre ] || ! cmp -s "$work/plain" "$work/preloaded"; then
    echo "output differs under the library (exit $rc_pre, without: $rc_plain):"
    diff "$work/plain" "$work/preloaded"
    exit 1
fi
echo "1 passed, 0 failed"

#!/bin/sh
# The library exports exactly the routines of shim/routines.def: no C++ or helper symbol leaks.
# usage: check_exports.sh LIBRARY SYMBOL...
set -eu
lib=$1; shift
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwiV]$/ {print $3}' | sort)
expected=$(printf '%s\n' "$@" | sort)
if [ "$actual" != "$expected" ]; then
    echo "exported symbols differ from shim/routines.def"
    echo "expected:"; echo "$expected"
    echo "actual:"; echo "$actual"
    exit 1
fi
echo "exports: $(echo "$actual" | tr '\n' ' ')"

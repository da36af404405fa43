#!/bin/sh
# The library exports exactly the routines of shim/routines.def and the C library functions it
# takes over (shim/process_hooks.cc: HOOKS, a ;-separated list): no C++ or helper symbol leaks,
# none is missing. It also needs no OpenMP runtime: preloaded, it would load one into every
# program (shim/openmp.cc asks the program's own instead). The expected list is the linker's
# export list that shim/CMakeLists.txt generated (exports.map), checked against the table's
# rows and HOOKS too.
# usage: check_exports.sh LIBRARY EXPORTS_MAP ROUTINES_DEF HOOKS
set -eu
lib=$1 map=$2 table=$3 hooks=$4
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwiV]$/ {print $3}' | sort)
expected=$(sed -n '/global:/,/local:/s/^ *\([A-Za-z_0-9]*\);$/\1/p' "$map" | sort)
rows=$( (sed -n 's/^AMXBLAS_[A-Z0-9_]*(\([A-Za-z_0-9]*\),.*/\1/p' "$table"; echo "$hooks" | tr ';' '\n') | sort)
if [ -z "$rows" ] || [ "$expected" != "$rows" ]; then
    echo "$map does not list the rows of $table and $hooks"
    echo "map:"; echo "$expected"
    echo "table:"; echo "$rows"
    exit 1
fi
if [ "$actual" != "$expected" ]; then
    echo "exported symbols differ from shim/routines.def"
    echo "expected:"; echo "$expected"
    echo "actual:"; echo "$actual"
    exit 1
fi
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if printf '%s\n' "$needed" | grep -E '^lib(g|i|i5)?omp' >/dev/null; then
    echo "$lib links an OpenMP runtime:"; echo "$needed"
    exit 1
fi
echo "exports: $(echo "$actual" | tr '\n' ' ')"
echo "needed: $(echo "$needed" | tr '\n' ' ')"

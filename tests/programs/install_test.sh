#!/bin/sh
# cmake --install into a scratch prefix: the installed launcher finds the installed library
# by itself, the pkg-config file names it, and the report tool runs.
# Usage: install_test.sh BUILD_DIR OUTDIR
set -eu
. "$(dirname "$0")/lib.sh"
build=$1 out=$2
fresh_dir "$out"
cmake --install "$build" --prefix "$out/prefix" > "$out/install.txt" || fail "cmake --install failed"
cat "$out/install.txt"
run=$out/prefix/bin/amxblas-run
[ -x "$run" ] && [ -x "$out/prefix/bin/amxblas-report" ] || fail "bin/ lacks amxblas-run or amxblas-report"
lib=$(env -u AMXBLAS_LIBRARY "$run" --print-library) || fail "the installed amxblas-run found no library"
case $lib in
    "$out/prefix/"*) echo "ok: the installed amxblas-run preloads $lib" ;;
    *) fail "the installed amxblas-run chose $lib, outside the prefix" ;;
esac
pc=$(find "$out/prefix" -name amxblas.pc | head -1)
[ -n "$pc" ] || fail "no amxblas.pc installed"
grep -qx "preload=\${libdir}/libamxblas.so.0" "$pc" || fail "$pc has no preload variable"
[ -f "$(dirname "$lib")/libamxblas.so.0" ] || fail "no libamxblas.so.0 beside $lib"
[ -n "$(find "$out/prefix/share/doc" -name README.md)" ] || fail "no README.md in share/doc"
"$out/prefix/bin/amxblas-report" --help > /dev/null || fail "the installed amxblas-report fails"
echo "ok: launcher, report tool, amxblas.pc and README installed"

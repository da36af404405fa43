#!/bin/sh
# cmake --install into a scratch prefix (not the configured one): the installed launcher finds
# the installed library by itself, pkg-config's preload variable names that file and
# preloading it works, and the report and replay tools run.
# Usage: install_test.sh BUILD_DIR OUTDIR PROGRAM   (PROGRAM: one that calls DGEMM/SGEMM)
set -eu
. "$(dirname "$0")/lib.sh"
build=$1 out=$2 program=$3
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
# The description names the four GEMMs the library takes over (issue 48: SGEMM/DGEMM only).
for routine in SGEMM DGEMM CGEMM ZGEMM; do
    grep "^Description:" "$pc" | grep -qw "$routine" || fail "$pc's description does not name $routine: $(grep "^Description:" "$pc")"
done
command -v pkg-config >/dev/null || skip "pkg-config is not installed (Debian: pkg-config)"
preload=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=preload amxblas) ||
    fail "pkg-config cannot read $pc"
case $preload in
    "$out/prefix/"*) ;;
    *) fail "pkg-config --variable=preload amxblas is $preload, outside the prefix $out/prefix" ;;
esac
[ -f "$preload" ] || fail "pkg-config --variable=preload amxblas names $preload, which does not exist"
AMXBLAS_VERBOSE=1 AMXBLAS_LOG="$out/preload.log" LD_PRELOAD="$preload" "$program" > "$out/preload.out" 2>&1 ||
    fail "$program failed under LD_PRELOAD=$preload: $(tail -5 "$out/preload.out")"
grep -q "^amxblas: summary pid=[0-9]* calls=[1-9]" "$out/preload.log" ||
    fail "LD_PRELOAD=$preload wrote no summary: the library was not loaded"
echo "ok: pkg-config's preload $preload exists and preloads (its summary is in $out/preload.log)"
[ -f "$(dirname "$lib")/libamxblas.so.0" ] || fail "no libamxblas.so.0 beside $lib"
[ -n "$(find "$out/prefix/share/doc" -name README.md)" ] || fail "no README.md in share/doc"
# Every link of the installed README and pages resolves in the installed tree, as in the source
# tree (the pages link to docs/bench/, amxemu/README.md and tests/data/dft-gemm/README.md, which
# are installed beside them). The top README, not one of those.
docdir=$(dirname "$(find "$out/prefix/share/doc" -path '*/amxblas/README.md' | head -1)")
python3 "$(dirname "$0")/../docs/check_links.py" "$docdir" || fail "the installed docs in $docdir have broken links"
echo "ok: every link of the installed docs ($docdir) resolves"
"$out/prefix/bin/amxblas-report" --help > /dev/null || fail "the installed amxblas-report fails"
# --explain's helper is installed under libexec and the installed launcher finds it.
"$out/prefix/bin/amxblas-run" --explain dgemm 4096 4096 256 > "$out/explain.out" 2>&1 ||
    fail "the installed amxblas-run --explain fails: $(tail -3 "$out/explain.out")"
grep -q "^amx .* route fp64-21" "$out/explain.out" || fail "amxblas-run --explain: no amx row: $(cat "$out/explain.out")"
# --calibrate's helper too (its key alone: the measurement itself is tests/shim's).
"$out/prefix/bin/amxblas-run" --calibrate --print-key > "$out/key.out" 2>&1 ||
    fail "the installed amxblas-run --calibrate fails: $(tail -3 "$out/key.out")"
grep -q "^  library amxblas " "$out/key.out" || fail "amxblas-run --calibrate --print-key: $(cat "$out/key.out")"
# The replay tool, beside the launcher: it runs, and replays a captured call under the installed
# library (its dgemm_ resolves there).
replay=$out/prefix/bin/amxblas-replay
[ -x "$replay" ] || fail "bin/ lacks amxblas-replay"
"$replay" --help | grep -q "^Usage: amxblas-replay" || fail "the installed amxblas-replay --help fails"
src=$(dirname "$0")/../data/dft-gemm/dgemmNN4x3x4.0.gemm
LD_PRELOAD="$preload" "$replay" "$src" > "$out/replay.out" 2>&1 ||
    fail "the installed amxblas-replay failed: $(tail -3 "$out/replay.out")"
grep -q "^amxblas-replay: dgemm_ is $out/prefix/.*libamxblas" "$out/replay.out" ||
    fail "the installed amxblas-replay did not run under the installed library: $(cat "$out/replay.out")"
echo "ok: launcher, report tool, replay tool, amxblas.pc and README installed"

#!/bin/sh
# amxblas-report --plot writes a PNG (with gnuplot, else matplotlib).
# Usage: report_plot_test.sh AMXBLAS_REPORT DATA_DIR OUTDIR
set -eu
. "$(dirname "$0")/lib.sh"
report=$1 data=$2 out=$3
command -v gnuplot >/dev/null || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
    skip "neither gnuplot (Debian package gnuplot-nox) nor python3-matplotlib is installed"
fresh_dir "$out"
"$report" --plot "$out/report.png" "$data/percall.log" "$data/summary.log" >/dev/null ||
    fail "amxblas-report --plot exited $?"
[ "$(head -c 4 "$out/report.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
    fail "$out/report.png is not a PNG"
echo "ok: $out/report.png is a PNG"

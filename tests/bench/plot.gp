# Plots of amxblas_bench's results.csv (run by scripts/bench.sh):
#   gnuplot -e "csv='DIR/results.csv'; outdir='DIR'" tests/bench/plot.gp
# Square problems only; timings from the uniform input class; x axis N (log 2).
# Columns: 1 m, 2 n, 3 k, 4 route, 6 input, 7 status, 9 gflops, 10 speedup, 11 eF,
# 13 eF_exact, 15 split_pack_s, 16 compute_s, 17 split_pack_share.
set datafile separator ','
set terminal pngcairo size 900,600 noenhanced font ',10'
set logscale x 2
set grid
set key outside right
set xlabel 'N (M = N = K)'

routes = 'openblas_sgemm openblas_dgemm fp32 fp64_6 fp64_10 fp64_15 fp64_21'
emulated = 'fp32 fp64_6 fp64_10 fp64_15 fp64_21'
# Value of column c for route r and input class cls, else undefined (skipped by smooth unique).
pick(r, cls, c) = (strcol(4) eq r && strcol(6) eq cls && strcol(7) eq "ok" && $1 == $2 && $2 == $3) ? column(c) : NaN

set output outdir.'/throughput.png'
set title 'Throughput, 2N^3/T'
set ylabel 'GFLOP/s'
plot for [r in routes] csv skip 1 using 2:(pick(r, 'uniform', 9)) smooth unique with linespoints title r

set output outdir.'/speedup.png'
set title 'Speedup over OpenBLAS of the same precision'
set ylabel 'speedup'
plot for [r in emulated] csv skip 1 using 2:(pick(r, 'uniform', 10)) smooth unique with linespoints title r, \
     1 with lines dashtype 2 lc 'black' title 'OpenBLAS'

set output outdir.'/error.png'
set multiplot layout 1,3 title 'eF against the exact sampled reference (lines) and against OpenBLAS (points)'
set logscale y 10
set format y '%.0e'
set ylabel 'eF'
unset key
do for [cls in 'uniform loguniform cancellation'] {
    set title cls
    if (cls eq 'cancellation') { set key outside right }
    plot for [r in routes] csv skip 1 using 2:(pick(r, cls, 13)) smooth unique with linespoints title r, \
         for [r in emulated] csv skip 1 using 2:(pick(r, cls, 11)) smooth unique with points pt 6 notitle
}
unset multiplot
unset logscale y
set format y '%g'
set key outside right

set output outdir.'/breakdown.png'
set multiplot layout 1,2 title 'Time breakdown (uniform input)'
set title 'split + pack share of the call'
set ylabel 'split + pack / (split + pack + compute), %'
set yrange [0:100]
plot for [r in emulated] csv skip 1 using 2:(100 * pick(r, 'uniform', 17)) smooth unique with linespoints title r
set autoscale y
set logscale y 10
set title 'seconds: split + pack (dashed), compute + reconstruct (solid)'
set ylabel 's'
plot for [r in emulated] csv skip 1 using 2:(pick(r, 'uniform', 16)) smooth unique with linespoints title r, \
     for [r in emulated] csv skip 1 using 2:(pick(r, 'uniform', 15)) smooth unique with linespoints dashtype 2 notitle
unset multiplot

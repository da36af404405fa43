# Plots of amxblas_bench's results.csv (run by scripts/bench.sh):
#   gnuplot -e "csv='DIR/results.csv'; outdir='DIR'" bench/plot.gp
# Square problems only; timings from the uniform input class; x axis N (log 2).
# Columns: 1 m, 2 n, 3 k, 4 route, 6 input, 7 status, 9 gflops, 10 speedup, 11 eF,
# 13 eF_exact, 15 split_pack_s, 16 compute_s, 17 split_pack_share.
set datafile separator ','
set terminal pngcairo size 1000,600 noenhanced font ',10'
set logscale x 2
set grid
set key outside right
set xlabel 'N (M = N = K)'

# The routes, in the order the CSV first names them: the two OpenBLAS baselines, then the
# variants of kernels/common/variants.def (the benchmark writes them in that order).
routes = system(sprintf("awk -F, 'NR > 1 && !seen[$4]++ { printf \"%%s \", $4 }' '%s'", csv))
emulated = system(sprintf("awk -F, 'NR > 1 && $4 !~ /^openblas_/ && !seen[$4]++ { printf \"%%s \", $4 }' '%s'", csv))
# The rows of route r and input class cls that ran, square shapes only, in file order (N rising).
sel(r, cls) = sprintf("< awk -F, '$4 == \"%s\" && $6 == \"%s\" && $7 == \"ok\" && $1 == $2 && $2 == $3' '%s'", r, cls, csv)

set output outdir.'/throughput.png'
set title 'Throughput, 2N^3/T'
set ylabel 'GFLOP/s'
plot for [r in routes] sel(r, 'uniform') using 2:9 with linespoints title r

set output outdir.'/speedup.png'
set title 'Speedup over OpenBLAS of the same precision'
set ylabel 'speedup'
plot for [r in emulated] sel(r, 'uniform') using 2:10 with linespoints title r, \
     1 with lines dashtype 2 lc 'black' title 'OpenBLAS'

set output outdir.'/error.png'
set terminal pngcairo size 1300,550 noenhanced font ',10'
set multiplot layout 1,3 title 'eF: against the exact sampled reference (lines), against OpenBLAS (circles)'
set bmargin 7
set logscale y 10
set format y '%.0e'
set ylabel 'eF'
unset key
do for [cls in 'uniform loguniform cancellation'] {
    set title cls
    if (cls eq 'cancellation') { set key horizontal maxcols 4 at screen 0.5, 0.06 center }
    plot for [i = 1:words(routes)] sel(word(routes, i), cls) using 2:13 with linespoints lc i title word(routes, i), \
         for [i = 3:words(routes)] sel(word(routes, i), cls) using 2:11 with points pt 6 lc i notitle
}
unset multiplot
set bmargin
unset logscale y
set format y '%g'
set key default
set key outside right vertical

set output outdir.'/breakdown.png'
set terminal pngcairo size 1300,550 noenhanced font ',10'
set multiplot layout 1,2 title 'Time breakdown (uniform input): split + pack, compute + reconstruct'
set title 'split + pack share of the call'
set ylabel '%'
set yrange [0:100]
plot for [r in emulated] sel(r, 'uniform') using 2:(100 * $17) with linespoints title r
set autoscale y
set logscale y 10
set title 'seconds: split + pack (dashed), compute + reconstruct (solid)'
set ylabel 's'
plot for [i = 1:words(emulated)] sel(word(emulated, i), 'uniform') using 2:16 with linespoints lc i title word(emulated, i), \
     for [i = 1:words(emulated)] sel(word(emulated, i), 'uniform') using 2:15 with linespoints lc i dashtype 2 notitle
unset multiplot

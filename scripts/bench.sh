#!/bin/sh
# bench.sh: OpenBLAS against every route of amxblas (FP32, FP64-6/10/15/21) on one backend;
# accuracy on three input classes; split + pack against memcpy; the micro-kernel against the
# VDPBF16PS peak; the interposer's cost on forwarded calls; AMX tile counts under the trap
# harness and the whole-call AMX model built on them; the first routed call of a process against
# a warm one; a CSV, PNG plots (gnuplot) and a table on stdout. The driver: bench/.
#
#   scripts/bench.sh [--quick] [--sweep] [--sizes "256 512 1024 2048"] [--shapes "MxNxK ..."]
#                    [--memory | --compare LIB | --int8] [--dft-dir DIR] [--backend avx512|reference|amx]
#                    [--reps R] [--out DIR]
#                    [--build-dir DIR] [--driver PATH --interposer PATH [--amxemu PATH]]
#
#   --quick        the CI smoke mode (ctest bench.smoke): N = 64 128, 1 repetition; checks that
#                  every section runs and the files are written, never the speed
#   --sweep        only the size sweep: fp32, fp64_6, fp64_21 and OpenBLAS at N = 256 384 512 768
#                  1000 1024 1536 2000 2048 3000 4096 (or --sizes), 3 repetitions, flagging any
#                  drop of more than 15% below the best smaller size of a route (sweep.csv)
#   --backend      default: avx512 where the library runs it (AVX-512 BF16), else the portable
#                  reference kernels (scalar: at N = 128, 45x (fp32) to 125x (fp64_36) slower than
#                  OpenBLAS on a 2-core AMD EPYC Zen 2; up to a minute per call at N = 2048, so
#                  there pass --sizes)
#   --model        only the cost model's check (bench/model_check.cc): 22 shapes (square,
#                  tall-skinny, short-wide, small K, large K; or --shapes) x fp32, fp64_6, the
#                  routed call and OpenBLAS alternated, medians of --reps (default 5) after a
#                  warm-up, against policy/cost_model.cc's prediction for the backend (model.log);
#                  OPENBLAS_THREAD_TIMEOUT=4 unless set, so OpenBLAS's threads do not spin into it.
#                  Then, for each real BLAS (--blas, else OpenBLAS and netlib's reference BLAS),
#                  calibration (amxblas-calibrate into DIR/wisdom) and the sweep of
#                  bench/model_sweep.cc: 26 shapes x {s,d,c,z}gemm (or --shapes), the
#                  routed call (FP64: --fp64, default auto) and the real BLAS alternated, medians
#                  of --reps (default 3), the errors of the built-in and of the calibrated
#                  predictions (target: 90% within 25% after calibration)
#   --mixed        only the mixed workload (bench/mixed_workload.cc; mixed.log): for each
#                  real BLAS, calibration, then the DFT calls (--dft-dir) and the sweep (or
#                  --shapes), each forwarded and routed (FP64 auto), and the total time per
#                  routine and shape class of forwarding all, routing all and each model's
#                  decisions (default settings, AMXBLAS_MIN_N=1); target: the calibrated model
#                  within 1.05x of the better of the first two
#   --blas LIB     --model and --mixed: the one real BLAS to measure
#   --fp64 R       --model's sweep: the FP64 route (auto, bf16-auto, int8-auto, bf16-P, int8-C)
#   --memory       only the peak extra memory of one routed call (issue 28; memory.log): SGEMM,
#                  DGEMM fixed 21, DGEMM auto and ZGEMM auto at N = 4096 8192 (or --sizes), each
#                  in a fresh process (bench/one_gemm_rss.c) with OpenBLAS alone and again
#                  under the interposer with routing forced; target: peak RSS at most 64 MiB plus
#                  2% of the three operands over OpenBLAS alone's; a call the library forwarded
#                  is "not routed", with its reason; exit 1 unless every row passes
#   --compare LIB  only the side-by-side check of this build against another libamxblas.so LIB
#                  (an earlier build; issue 28): SGEMM, DGEMM fixed 21, DGEMM auto and ZGEMM auto at
#                  N = 1024 2048 4096 (or --sizes), routing forced, each call in fresh processes,
#                  LIB and this build alternated --reps times (default 3); per process one warm-up
#                  call then one timed call; medians of the times and of the peak extra memory
#                  (as --memory); target: this build at most 1.05x LIB's time (compare.log);
#                  then the same routes in the AMX cost model, chunked against whole-operand
#                  splits (bench/chunk_model.cc; the full run prints it too)
#   --int8         only the INT8 FP64 engine's section (issue 24 item 5; int8.log), which the full
#                  run also runs (into bench.log) and --quick smoke-tests at N = 64-128 on 4 calls:
#                  bench/amxblas_bench_int8, 2 threads, alternated, medians of --reps
#                  (default 3) after a warm-up: (1) INT8 auto, BF16 auto and OpenBLAS DGEMM on
#                  uniform and log-uniform (2^-20..2^20) inputs at N = 1024 2048 (avx512, amx) or
#                  512 1024 (reference: scalar, about a minute per call at 2048; --sizes
#                  overrides): time ratios, moduli / products picked, entries repaired, max
#                  error on 1024 sampled entries against an exact reference over OpenBLAS's;
#                  (2) the INT8 facts + residue split and pack against memcpy, N = 1024 2048;
#                  (3) the whole-call AMX model of INT8 auto beside BF16 auto at N = 2048 4096
#                  (tile counts checked under the trap harness at N = 256, phases measured here
#                  with the products taken out); (4) the captured DFT calls (--dft-dir): routed,
#                  forwarded, within 2x OpenBLAS's error; targets as PASS/MISS lines
#   --dft-dir DIR  the .gemm files of --int8's part 4 (default tests/data/dft-gemm, the 16 captured
#                  calls in the repository; pass the folder of the whole capture, 123 calls, to
#                  measure on all of them; --quick takes the first 4 of the default)
#   --tiny         only the decision's own cost (bench/bench_tiny_call.cc; tiny.log): a 4 x 4 x 4
#                  DGEMM, SGEMM and cblas_dgemm below AMXBLAS_MIN_N in a loop, one thread, OpenBLAS and
#                  netlib's reference BLAS each called directly and through the library, batches
#                  alternated, medians; target: at most 20 ns added per call
#   --backend amx  AMX cannot run here: counts under the trap harness only, never times
#   --out DIR      results (default bench-results/); the run's log is DIR/bench.log
#   --build-dir    where to build (default build/); --driver/--interposer/--amxemu skip the build
#
# OpenBLAS: OPENBLAS_CORETYPE=COOPERLAKE unless set. OpenBLAS 0.3.21 accepts it (it is also what
# it detects on this machine) and it uses the SkylakeX SGEMM/DGEMM kernels: measured here at
# N = 1024, 2 threads, COOPERLAKE and SKYLAKEX are equal within noise (192 and 193 GFLOP/s
# SGEMM, 97 and 96 DGEMM), HASWELL and ZEN slower (173 and 85).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)

quick=0 sweep=0 model=0 mixed=0 memory=0 int8=0 tiny=0 blas_libs='' fp64_route=auto dft_dir='' compare='' sizes='' shapes='' backend='' reps='' out=bench-results build="$root/build"
driver='' interposer='' amxemu=''
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --sweep) sweep=1 ;;
        --model) model=1 ;;
        --memory) memory=1 ;;
        --int8) int8=1 ;;
        --tiny) tiny=1 ;;
        --mixed) mixed=1 ;;
        --blas) blas_libs=$2; shift ;;
        --fp64) fp64_route=$2; shift ;;
        --dft-dir) dft_dir=$2; shift ;;
        --compare) compare=$2; shift ;;
        --sizes) sizes=$2; shift ;;
        --shapes) shapes=$2; shift ;;
        --backend) backend=$2; shift ;;
        --reps) reps=$2; shift ;;
        --out) out=$2; shift ;;
        --build-dir) build=$2; shift ;;
        --driver) driver=$2; shift ;;
        --interposer) interposer=$2; shift ;;
        --amxemu) amxemu=$2; shift ;;
        -h|--help) sed -n '2,/^set -eu$/p' "$0" | sed '$d'; exit 0 ;;
        *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
# The backends: the rows of kernels/common/backends.def.
backends=$(sed -n 's/^AMXBLAS_BACKEND(\([a-z0-9_]*\),.*/\1/p' "$root/kernels/common/backends.def" | tr '\n' ' ')
case " $backends" in *" ${backend:-avx512} "*) ;; *) echo "bench.sh: --backend, one of: $backends" >&2; exit 2 ;; esac

if [ -z "$driver" ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$build" -j2 --target amxblas_bench amxblas amxblas_contention_timer amxblas_bench_fp64_auto amxblas_bench_complex amxblas_backends_here amxblas_one_gemm_rss amxblas_bench_int8 amxblas_chunk_model || {
        echo "bench.sh: could not build amxblas_bench and amxblas in $build (are the benchmarks in" \
             "the build? the top-level CMakeLists.txt adds bench/ with the tests, BUILD_TESTING=ON)" >&2
        exit 1
    }
    cmake --build "$build" -j2 --target amxemu || echo "bench.sh: the trap harness (amxemu/) did not build"
    # Where the build puts them (bench/, amxemu/); elsewhere in an older build tree otherwise.
    driver="$build/bench/amxblas_bench"
    [ -x "$driver" ] || driver=$(find "$build" -name amxblas_bench -type f | head -n 1)
    # The library just built, not a copy a test installed somewhere under the build tree.
    interposer="$build/shim/libamxblas.so"
    [ -e "$interposer" ] || interposer=$(find "$build" -name libamxblas.so -not -path '*/install/*' | head -n 1)
    amxemu="$build/amxemu/libamxemu.so"
    [ -f "$amxemu" ] || amxemu=$(find "$build" -name libamxemu.so -type f | head -n 1)
fi
[ -x "$driver" ] || { echo "bench.sh: no amxblas_bench driver (built in $build?)" >&2; exit 1; }
# The backends this machine runs, as the library itself decides (tests/common/backends_here.cc),
# from the build the driver belongs to.
backends_here=$("$(dirname "$driver")/../tests/common/amxblas_backends_here" 2>/dev/null || true)
if [ -z "$backend" ]; then
    backend=reference
    printf '%s\n' "$backends_here" | grep -qx avx512 && backend=avx512
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)

# The INT8 FP64 engine's section (--int8; bench/amxblas_bench_int8). Appends to $1.
int8_section() {
    int8_log=$1
    int8_driver=$(dirname "$driver")/amxblas_bench_int8
    if [ ! -x "$int8_driver" ]; then
        echo "INT8 section skipped (no amxblas_bench_int8 beside the driver)" | tee -a "$int8_log"
        return 0
    fi
    # The 16 calls kept in the repository unless --dft-dir names another folder (--quick: 4 of them).
    int8_dft=$dft_dir
    if [ -z "$int8_dft" ]; then
        int8_dft="$root/tests/data/dft-gemm"
    fi
    set -- --backend "$backend" --threads 2 --dft "$int8_dft"
    [ "$quick" = 1 ] && set -- "$@" --quick
    [ -n "$reps" ] && set -- "$@" --reps "$reps"
    [ "$quick" = 0 ] && [ -n "$sizes" ] && set -- "$@" --sizes "$sizes"
    int8_rc=0
    if [ "$backend" = amx ]; then
        echo "backend amx: no timed INT8 run (AMX cannot run here; counts only, below)" | tee -a "$int8_log"
    else
        { "$int8_driver" "$@" || echo "rc=$?" >"$out/.int8rc"; } 2>&1 | tee -a "$int8_log"
    fi
    int8_n=256
    [ "$quick" = 1 ] && int8_n=64
    if [ -n "$amxemu" ] && [ -f "$amxemu" ]; then
        { env LD_PRELOAD="$amxemu" "$int8_driver" --amx-counts "$int8_n" || echo "rc=$?" >"$out/.int8rc"; } 2>&1 | tee -a "$int8_log"
    else
        echo "AMX trap harness (libamxemu.so) not available: INT8 tile counts skipped" | tee -a "$int8_log"
    fi
    [ -e "$out/.int8rc" ] && int8_rc=1
    rm -f "$out/.int8rc"
    return $int8_rc
}
if [ "$int8" = 1 ]; then
    {
        echo "bench.sh --int8: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n), backend $backend;" \
             "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
             "load:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
    } | tee "$out/int8.log"
    [ "$backend" = avx512 ] && export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}"
    int8_section "$out/int8.log" || exit 1
    exit 0
fi
if [ "$tiny" = 1 ]; then
    tiny_driver="$(dirname "$driver")/amxblas_bench_tiny_call"
    [ -x "$tiny_driver" ] || cmake --build "$build" -j2 --target amxblas_bench_tiny_call
    {
        echo "bench.sh --tiny: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n);" \
             "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
             "load:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
        tiny_rc=0
        for lib in libopenblas.so.0 /usr/lib/x86_64-linux-gnu/blas/libblas.so.3; do
            OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}" "$tiny_driver" "$interposer" --blas "$lib" || tiny_rc=1
        done
        [ "$tiny_rc" = 0 ] || echo "bench.sh --tiny: a routine added more than 20 ns (MISS above)"
    } 2>&1 | tee "$out/tiny.log"
    exit 0
fi
# calibrated LIB: calibrates the backend against real BLAS LIB into $out/wisdom (one entry per
# library; amxblas-calibrate keeps the others) and prints its table.
calibrated() {
    calibrator="$build/scripts/calibrate/amxblas-calibrate"
    [ -x "$calibrator" ] || calibrator=$(dirname "$driver")/../scripts/calibrate/amxblas-calibrate
    "$calibrator" --backend "$backend" --blas "$1" --out "$out/wisdom"
}
blas_libs=${blas_libs:-"libopenblas.so.0 /usr/lib/x86_64-linux-gnu/blas/libblas.so.3"}
if [ "$mixed" = 1 ]; then
    [ "$backend" = amx ] && { echo "bench.sh: --mixed times, so not on --backend amx" >&2; exit 2; }
    [ -x "$(dirname "$driver")/amxblas_mixed_workload" ] || cmake --build "$build" -j2 --target amxblas_mixed_workload amxblas-calibrate
    export OPENBLAS_THREAD_TIMEOUT="${OPENBLAS_THREAD_TIMEOUT:-4}"
    export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}"
    {
        echo "bench.sh --mixed: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n);" \
             "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
             "load:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
        for lib in $blas_libs; do
            calibrated "$lib" || exit 1
            set -- --blas "$lib" --wisdom "$out/wisdom" --backend "$backend" --reps "${reps:-5}" \
                   --dft-dir "${dft_dir:-$root/tests/data/dft-gemm}"
            [ -n "$shapes" ] && set -- "$@" --shapes "$shapes"
            "$(dirname "$driver")/amxblas_mixed_workload" "$@"
            echo "load after:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
        done
    } 2>&1 | tee "$out/mixed.log"
    exit 0
fi
if [ "$model" = 1 ]; then
    [ "$backend" = amx ] && { echo "bench.sh: --model times, so not on --backend amx" >&2; exit 2; }
    checker="$(dirname "$driver")/amxblas_model_check"
    [ -x "$checker" ] || cmake --build "$build" -j2 --target amxblas_model_check
    [ -x "$checker" ] || { echo "bench.sh: no amxblas_model_check beside $driver" >&2; exit 1; }
    export OPENBLAS_THREAD_TIMEOUT="${OPENBLAS_THREAD_TIMEOUT:-4}"
    [ "$backend" = avx512 ] && export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}"
    set -- --backend "$backend" --reps "${reps:-5}"
    [ -n "$shapes" ] && set -- "$@" --shapes "$shapes"
    {
        echo "bench.sh --model: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n);" \
             "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
             "load:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
        "$checker" "$@"
        # Built-in against calibrated predictions, per real BLAS.
        [ -x "$(dirname "$driver")/amxblas_model_sweep" ] || cmake --build "$build" -j2 --target amxblas_model_sweep amxblas-calibrate
        for lib in $blas_libs; do
            calibrated "$lib" || exit 1
            set -- --blas "$lib" --wisdom "$out/wisdom" --backend "$backend" --reps "${reps:-3}" --fp64 "$fp64_route"
            [ -n "$shapes" ] && set -- "$@" --shapes "$shapes"
            "$(dirname "$driver")/amxblas_model_sweep" "$@"
            echo "load after:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
        done
    } 2>&1 | tee "$out/model.log"
    exit 0
fi
# The peak extra memory of one routed call (issue 28): each call in a fresh process of
# bench/one_gemm_rss.c, once with OpenBLAS alone and once under the interposer with routing
# forced. The MiB columns are peak RSS less the RSS the OpenBLAS-alone process held just before
# its call (operands, code), so extra = routed - OpenBLAS alone is the difference of the peaks.
if [ -n "$compare" ]; then
    rss="$(dirname "$driver")/amxblas_one_gemm_rss"
    [ -x "$rss" ] || { echo "bench.sh: no amxblas_one_gemm_rss beside $driver" >&2; exit 1; }
    [ -e "$compare" ] || { echo "bench.sh: --compare: no library $compare" >&2; exit 2; }
    export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}"
    # one LIB ROUTINE PRODUCTS N: "seconds extra_MiB" of one fresh process (warm-up, timed call).
    one() {
        plain=$("$rss" "$2" "$4" | sed -n 's/.*before_kib=\([0-9]*\).*/\1/p')
        env LD_PRELOAD="$1" AMXBLAS_BACKEND="$backend" AMXBLAS_MIN_N=1 AMXBLAS_SHAPES=any AMXBLAS_FP64_PRODUCTS="$3" \
            "$rss" "$2" "$4" 1 | awk -v base="$plain" '{ for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] } }
                END { printf "%s %.1f\n", v["call_s"], (v["peak_kib"] - base) / 1024 }'
    }
    median() { sort -g | awk '{ x[NR] = $1 } END { print x[int((NR + 1) / 2)] }'; }
    cmp_row() {
        : > "$out/cmp.old"; : > "$out/cmp.new"
        for _ in $(seq "${reps:-3}"); do
            one "$compare" "$2" "$3" "$4" >> "$out/cmp.old"
            one "$interposer" "$2" "$3" "$4" >> "$out/cmp.new"
        done
        to=$(cut -d' ' -f1 "$out/cmp.old" | median); tn=$(cut -d' ' -f1 "$out/cmp.new" | median)
        mo=$(cut -d' ' -f2 "$out/cmp.old" | median); mn=$(cut -d' ' -f2 "$out/cmp.new" | median)
        awk -v c="$1" -v n="$4" -v to="$to" -v tn="$tn" -v mo="$mo" -v mn="$mn" 'BEGIN {
            r = tn / to; printf "%-11s %5d %10.3f %10.3f %7.3f %10.1f %10.1f  %s\n", c, n, to, tn, r, mo, mn, r <= 1.05 ? "PASS" : "MISS" }'
    }
    {
        echo "bench.sh --compare: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), backend $backend, routing forced; $compare (old)" \
             "against $interposer (new), alternated, ${reps:-3} fresh processes each, medians; cpu:" \
             "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
        printf '%-11s %5s %10s %10s %7s %10s %10s  %s\n' call N old_s new_s new/old old_MiB new_MiB "time target 1.05"
        for n in ${sizes:-1024 2048 4096}; do
            cmp_row SGEMM sgemm 0 "$n"
            cmp_row DGEMM-21 dgemm 21 "$n"
            cmp_row "DGEMM auto" dgemm auto "$n"
            cmp_row "ZGEMM auto" zgemm auto "$n"
        done
        # What the AMX cost model says of the same routes (no machine here times AMX).
        chunk_model="$(dirname "$driver")/amxblas_chunk_model"
        [ -x "$chunk_model" ] && "$chunk_model" --sizes "${sizes:-1024 2048 4096}"
    } 2>&1 | tee "$out/compare.log"
    rm -f "$out/cmp.old" "$out/cmp.new"
    grep -qE '  MISS$' "$out/compare.log" && exit 1
    exit 0
fi

if [ "$memory" = 1 ]; then
    rss="$(dirname "$driver")/amxblas_one_gemm_rss"
    [ -x "$rss" ] || cmake --build "$build" -j2 --target amxblas_one_gemm_rss
    [ -x "$rss" ] || { echo "bench.sh: no amxblas_one_gemm_rss beside $driver" >&2; exit 1; }
    [ -n "$interposer" ] || { echo "bench.sh: --memory needs --interposer with --driver" >&2; exit 2; }
    export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}"
    # mem_row CALL ROUTINE PRODUCTS N: one row of the table.
    mem_row() {
        amxlog="$out/memory-$2-$3-$4.amxblas.log"
        rm -f "$amxlog"
        plain=$("$rss" "$2" "$4") || plain=
        routed=$(env LD_PRELOAD="$interposer" AMXBLAS_BACKEND="$backend" AMXBLAS_MIN_N=1 AMXBLAS_SHAPES=any \
            AMXBLAS_FP64_PRODUCTS="$3" AMXBLAS_VERBOSE=1 AMXBLAS_LOG="$amxlog" "$rss" "$2" "$4") || routed=
        summary=$(grep "^amxblas: summary routine=$2_ " "$amxlog" 2>/dev/null || true)
        route=$(printf '%s' "$summary" | sed -n 's/.* route=\([^ ]*\).*/\1/p')
        reason=$(printf '%s' "$summary" | sed -n 's/.* reason=\([^ ]*\).*/\1/p')
        echo "$plain | $routed" | awk -v call="$1" -v n="$4" -v route="${route:-none}" -v reason="$reason" '
            { side = 1; for (i = 1; i <= NF; ++i) if ($i == "|") side = 2; else { split($i, kv, "="); v[side, kv[1]] = kv[2] } }
            END {
                if (v[1, "peak_kib"] == "" || v[2, "peak_kib"] == "") { printf "%-11s %5d  a run failed\n", call, n; exit }
                base = v[1, "before_kib"] / 1024
                ob = v[1, "peak_kib"] / 1024 - base; rt = v[2, "peak_kib"] / 1024 - base
                ops = v[1, "operand_bytes"] / 1048576; target = 64 + 0.02 * ops
                verdict = rt - ob <= target ? "PASS" : "MISS"
                if (route == "forward") verdict = "not routed (" reason ")"
                if (route == "none") verdict = "not routed (no summary in the log)"
                printf "%-11s %5d %-8s %10.1f %10.1f %10.1f %12.1f %10.1f  %s\n", call, n, route, ob, rt, rt - ob, ops, target, verdict
            }'
    }
    {
        echo "bench.sh --memory: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n), OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE" \
             "(OpenBLAS kernel: $("$rss" sgemm 1 | sed -n 's/.*openblas_core=//p'));" \
             "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
        echo "backend $backend through $interposer (AMXBLAS_MIN_N=1 AMXBLAS_SHAPES=any); one call per process,"
        echo "MiB = peak RSS (ru_maxrss) less the RSS held before the call with OpenBLAS alone; target = 64 + 2% of operands"
        printf '%-11s %5s %-8s %10s %10s %10s %12s %10s  %s\n' call N route openblas routed extra operands target verdict
        for n in ${sizes:-4096 8192}; do
            mem_row SGEMM sgemm 0 "$n"
            mem_row DGEMM-21 dgemm 21 "$n"
            mem_row "DGEMM auto" dgemm auto "$n"
            mem_row "ZGEMM auto" zgemm auto "$n"
        done
    } 2>&1 | tee "$out/memory.log"
    rows=$(grep -cE '^[SDZ]GEMM' "$out/memory.log" || true)
    pass=$(grep -cE '^[SDZ]GEMM.*  PASS$' "$out/memory.log" || true)
    miss=$(grep -cE '^[SDZ]GEMM.*  MISS$' "$out/memory.log" || true)
    echo "memory: $pass of $rows calls within 64 MiB + 2% of the operands over OpenBLAS alone" \
         "($miss MISS, $((rows - pass - miss)) not routed or failed)" | tee -a "$out/memory.log"
    [ "$pass" = "$rows" ] && exit 0
    exit 1
fi
log="$out/bench.log"
rm -f "$out"/*.csv "$out"/*.png
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-COOPERLAKE}"

# The driver's arguments, in the positional parameters (the one array POSIX sh has).
set -- --out "$out" --backend "$backend"
[ "$quick" = 1 ] && set -- "$@" --quick
[ -n "$reps" ] && set -- "$@" --reps "$reps"
[ -n "$sizes" ] && set -- "$@" --sizes "$sizes"
[ -n "$shapes" ] && set -- "$@" --shapes "$shapes"
[ -n "$interposer" ] && set -- "$@" --interposer "$interposer"

# logged CMD...: runs CMD with its output also appended to the log; returns CMD's status.
logged() {
    rcfile="$out/.rc"
    { rc=0; "$@" || rc=$?; echo "$rc" >"$rcfile"; } 2>&1 | tee -a "$log"
    rc=$(cat "$rcfile")
    rm -f "$rcfile"
    return "$rc"
}

{
    echo "bench.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -n), OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
         "load before the run:$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
    echo "backend: $backend (the library runs here: $(printf '%s' "$backends_here" | tr '\n' ' '))"
} | tee "$log"

status=0
if [ "$sweep" = 1 ]; then
    [ "$backend" = amx ] && { echo "bench.sh: --sweep times, so not on --backend amx" >&2; exit 2; }
    logged "$driver" --sweep "$@" || status=1
    echo "bench.sh: results in $out (exit $status)" | tee -a "$log"
    exit $status
fi
if [ "$backend" = amx ]; then
    echo "backend amx: no timed run (AMX cannot run here; counts only, below)" | tee -a "$log"
else
    logged "$driver" "$@" || status=1
fi

# The first routed call of a process against a warm call of the same order: each route and
# order in fresh processes, through the interposer (the library's own first-call costs: its
# configuration, the real BLAS's resolution, the thread pool's start, the workspace's first
# touch), and the same calls to OpenBLAS alone in fresh processes beside them (its own first
# call: thread start, buffers). Each case runs in $fc_runs processes and the verdicts are on
# medians: at N = 256 the warm time itself spreads about 10% from process to process (the second
# call is one sample per process), and at N = 1024 the first call's overhead spread 1.9-15 ms
# over 5 processes (docs/bench/bench.log of 9045284).
if [ -n "$interposer" ] && [ "$backend" != amx ]; then
    fc_sizes="256 1024" fc_runs=11
    [ "$quick" = 1 ] && fc_sizes=64 fc_runs=1
    {
        echo
        echo "== First call of a process vs a warm call (through $(basename "$interposer"), backend $backend, and OpenBLAS alone; 12 calls, warm = median of calls 3-12; $fc_runs fresh processes per row; touch = this machine's cost of a fresh 4 KiB page) =="
        printf '%-6s %-16s %10s %10s %10s %12s %12s %10s %8s %8s\n' N route first_ms second_ms warm_ms first-warm_ms second-warm touch_us faults later_faults
    } | tee -a "$log"
    rm -f "$out/first_call.csv"
    echo "n,route,first_s,second_s,warm_s,routed,touch_us_per_page,first_faults,later_faults,third_s" >"$out/first_call.csv"
    for n in $fc_sizes; do
        for r in fp32 fp64_6; do
            run=0
            while [ "$run" -lt "$fc_runs" ]; do
                # Interleaved, one process each, so a change in the machine's load hits both.
                logged env LD_PRELOAD="$interposer" AMXBLAS_BACKEND="$backend" AMXBLAS_SHAPES=square AMXBLAS_FP64_PRODUCTS=6 \
                    AMXBLAS_MIN_N=1 AMXBLAS_VERBOSE=0 "$driver" --first-call "$n" --route "$r" --out "$out" || status=1
                logged "$driver" --first-call "$n" --route "$r" --baseline --out "$out" || status=1
                run=$((run + 1))
            done
        done
    done
    echo | tee -a "$log"
    logged "$driver" --first-call-summary "$out/first_call.csv" || status=1
fi

# Under contention (issue 12, item 4): its own script, beside the driver's timer binary.
contention_timer=$(dirname "$driver")/amxblas_contention_timer
if [ "$backend" != amx ] && [ -n "$interposer" ] && [ -x "$contention_timer" ]; then
    contention_quick=
    [ "$quick" = 1 ] && contention_quick=--quick
    logged "$root/scripts/bench-contention.sh" --timer "$contention_timer" --interposer "$interposer" \
        --backend "$backend" $contention_quick || status=1
else
    echo "contention section skipped (no amxblas_contention_timer beside the driver, or backend amx)" | tee -a "$log"
fi

# FP64 auto (issue 11): its own script and driver, beside the main driver.
fp64_auto_driver=$(dirname "$driver")/amxblas_bench_fp64_auto
if [ "$backend" != amx ] && [ -x "$fp64_auto_driver" ]; then
    fp64_auto_quick=
    [ "$quick" = 1 ] && fp64_auto_quick=--quick
    logged "$root/scripts/bench-fp64-auto.sh" --driver "$fp64_auto_driver" --backend "$backend" \
        $fp64_auto_quick || status=1
else
    echo "FP64 auto section skipped (no amxblas_bench_fp64_auto beside the driver, or backend amx)" | tee -a "$log"
fi

# Complex GEMM (issue 13): CGEMM and ZGEMM against OpenBLAS, side by side in one process
# (bench/bench_complex.cc; writes complex.csv).
complex_section() {
    complex_bench=$(dirname "$driver")/amxblas_bench_complex
    if [ "$backend" = amx ] || [ ! -x "$complex_bench" ]; then
        echo "complex section skipped (no amxblas_bench_complex beside the driver, or backend amx)" | tee -a "$log"
        return 0
    fi
    set -- --backend "$backend" --out "$out"
    [ "$quick" = 1 ] && set -- "$@" --quick
    [ -n "$reps" ] && set -- "$@" --reps "$reps"
    [ "$quick" = 0 ] && [ -n "$sizes" ] && set -- "$@" --sizes "$sizes"
    logged "$complex_bench" "$@"
}
complex_section || status=1

# The INT8 FP64 engine (issue 24 item 5): side by side, split + pack, AMX model, DFT calls.
int8_section "$log" || status=1

# The AMX tile-instruction counts: a second run, on the amx backend, under the trap harness.
count_n=512
[ "$quick" = 1 ] && count_n=64
if [ -n "$amxemu" ] && [ -f "$amxemu" ]; then
    logged env LD_PRELOAD="$amxemu" "$driver" --amx-counts "$count_n" --out "$out" || status=1
else
    echo "AMX trap harness (libamxemu.so) not available: tile-instruction counts skipped" | tee -a "$log"
fi

# The bounded-memory driver against whole-operand splits, in the AMX cost model (issue 28).
chunk_model="$(dirname "$driver")/amxblas_chunk_model"
if [ -x "$chunk_model" ]; then
    logged "$chunk_model" || status=1
else
    echo "no amxblas_chunk_model beside the driver: the chunk model section skipped" | tee -a "$log"
fi

if command -v gnuplot >/dev/null 2>&1 && [ -f "$out/results.csv" ] && [ "$backend" != amx ]; then
    logged gnuplot -e "csv='$out/results.csv'; outdir='$out'" "$root/bench/plot.gp" || status=1
else
    echo "gnuplot (Debian gnuplot-nox) not found or no results: no plots" | tee -a "$log"
fi

# What every run must leave behind (the smoke test's assertions).
missing=
need() { [ -s "$out/$1" ] || missing="$missing $1"; }
if [ "$backend" != amx ]; then
    need results.csv
    [ -n "$interposer" ] && need forwarding.csv && need first_call.csv
    # The micro-kernel table is written where the library runs the avx512 kernels (its own
    # answer: tests/common's amxblas_backends_here).
    printf '%s\n' "$backends_here" | grep -qx avx512 && need microkernel.csv
    if command -v gnuplot >/dev/null 2>&1; then
        for p in throughput speedup error breakdown; do need "$p.png"; done
    fi
fi
[ -n "$amxemu" ] && [ -f "$amxemu" ] && need amx_counts.csv
if [ -x "$chunk_model" ]; then grep -q '^chunk model: ' "$log" || missing="$missing (the chunk model's summary)"; fi
if [ -n "$missing" ]; then
    echo "bench.sh: missing or empty in $out:$missing" | tee -a "$log"
    status=1
fi
if grep -qE '^(PASS|MISS)  ' "$log"; then
    { echo; echo "== All targets of this run =="; grep -E '^(PASS|MISS)  ' "$log"; } | tee -a "$log.targets"
    cat "$log.targets" >>"$log"
    rm -f "$log.targets"
fi
echo "bench.sh: results in $out (exit $status)" | tee -a "$log"
exit $status

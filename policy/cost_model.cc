#include "policy/cost_model.h"

#include <algorithm>

#include "kernels/common/chunk_plan.h"
#include "kernels/common/int8_chunk_plan.h"

namespace amxblas {

namespace {

// ---- The constants: one row per backend of kernels/common/backends.def, per core. ------------
//
// "Run A" is the main benchmark run of docs/performance.md (`OPENBLAS_CORETYPE=COOPERLAKE
// ./scripts/bench.sh`, 2-core AMD EPYC with AVX-512 BF16, OpenBLAS 0.3.21; docs/bench/bench.log).

// AMX: the whole-call model of bench/bench_model.cc, unchanged. Tile work from the
// harness's exact instruction counts at TDPBF16PS 16, TILELOADD 8, TILESTORED 8 cycles and
// 2.0 GHz (bench/bench.h kTdpCycles..., sources in bench/bench_amx.cc: Intel's
// optimization manual for TDPBF16PS, the rest assumed). Scan, split + pack and reconstruction
// are run A's AVX-512 rates at N = 2048 (bench.log, "Whole-call AMX model": scan 6.39 GB/s FP32;
// split + pack 10.36 GB/s FP32, 9.70 GB/s FP64-6, the slowest of 8.60-11.02 for the FP64
// routes but FP64-10's; reconstruction 7.45e9 / 1.7e10 values/s): every AMX CPU has AVX-512 and
// runs those code paths. The real BLAS: oneMKL at 90% of two 512-bit FMA ports (64 FP32 /
// 32 FP64 FLOP per cycle) at 2.0 GHz, bench_model.cc's native model; with it the model gives
// bench_model's ratios, which the paper's Figure 7 bounds (FP32 1.14-2.56x measured).
// Overhead: the routed call's fixed cost (thread-pool wake-up, workspace, set-up) as measured
// on the reference row's machine (6-19 us; 15 us taken): an assumption that an AMX server wakes
// its workers as fast; run A's VM needed about 100 us (its vCPUs on separate caches).
// The INT8 engine's split + pack and reconstruction likewise: its AVX-512 loops at N = 2048
// (16 moduli, fixed), the median of four runs of `amxblas_model_check --backend avx512 --routes
// int8_16 --calibrate --shapes 2048x2048x2048` on the avx512 row's machine (split + pack 4.69,
// 4.99, 5.20, 5.32 GB/s; reconstruction, folds and CRT and C's writes, 7.3e8, 7.9e8, 8.8e8,
// 9.0e8 values/s, each value one modulus of one entry). The folds of the K chunks before the
// last at 1.55 times the reconstruction's rate, as on the avx512 row.
constexpr CostConstants kCost_amx = {
    /*tiles=*/true, /*tdp=*/16, /*load=*/8, /*store=*/8, /*clock=*/2.0e9,
    /*step_s_fp32=*/0, /*step_s_fp64=*/0,
    /*scan=*/6.39e9,
    /*split_pack fp32, fp64=*/10.36e9, 9.70e9,
    /*recon fp32, fp64=*/7.45e9, 1.7e10,
    /*overhead=*/15e-6,
    /*blas fp32, fp64=*/0.90 * 64 * 2.0e9, 0.90 * 32 * 2.0e9,
    /*tile_s fp32, fp64=*/0, 0,
    /*step_s int8, tile_s int8=*/0, 0,
    /*split_pack int8=*/5.1e9, /*recon int8=*/8.4e8, /*fold int8=*/1.3e9,
};

// avx512: calibrated as the reference row is, on a 2-core AMD EPYC Zen 5 VM with AVX-512 BF16
// and VNNI (docs/cost-model.md): the means of three runs' medians over the 22 shapes x {fp32,
// fp64-6} of `OPENBLAS_CORETYPE=COOPERLAKE OPENBLAS_THREAD_TIMEOUT=4
// build/bench/amxblas_model_check --backend avx512 --calibrate --reps 3` (or 5): scan
// 1.75 GB/s, split + pack 3.26 / 1.84 GB/s, reconstruction 1.29e10 / 1.52e10 values/s,
// OpenBLAS 39.0 / 19.7 GFLOP/s per core (these sizes wake its threads). The products: the fit
// of step_s + tile_s / (steps per tile), 510 + 580 ns (FP32) and 470 + 1590 ns (FP64-6): a K of
// 16 or 32 costs four times a long K per step. Overhead: 60 us, not the 9-22 us the phases
// leave, because the smallest calls' thread wake-ups (40-230 us there, a probe) fall inside the
// phases' timers. Larger calls run faster per step (FP64-6 at 1024^3: 349 ns), and OpenBLAS
// faster still (60+ GFLOP/s per core): there the two errors partly cancel, and the predicted
// speedups (0.2-0.5x) stay far below the 1.10x the model routes at, as the measured ones
// (about 0.2x) do.
// The INT8 engine (its VNNI micro-kernel, AVX-512 loops), the same sweep with `--routes int8_16`,
// three runs, the means of their medians: 563 ns per 32 x 32 x 64 step (450, 634, 604; the fit
// with a per-tile term is unstable on these short calls, from -577 to 199 ns, so none is
// taken), split + pack 2.59 GB/s (2.82, 2.46, 2.50), reconstruction 5.9e8 values/s (6.4e8,
// 5.7e8, 5.5e8). Its reconstruction is timed as the call's compute with products that do no
// arithmetic (bench/no_arith_kernels.h). At N = 1024-4096 the steps take 250-330 ns.
// The folds of the K chunks before the last: 1.55 times the reconstruction's rate per value,
// the ratio of the two in three runs of `--routes int8_16 --calibrate --reps 3 --shapes
// "1024x1024x2048 2048x2048x2048 1024x1024x8192 1024x1024x16384 2048x2048x8192
// [4096x4096x4096]"` (1.51, 1.57, 1.58; folds 1.56e9-1.69e9, reconstruction 0.99e9-1.08e9
// values/s on a quieter day than the sweep's), times the row's 5.9e8.
constexpr CostConstants kCost_avx512 = {
    false, 0, 0, 0, 0,
    /*step_s_fp32=*/510e-9, /*step_s_fp64=*/470e-9,
    /*scan=*/1.75e9,
    /*split_pack fp32, fp64=*/3.26e9, 1.84e9,
    /*recon fp32, fp64=*/1.29e10, 1.52e10,
    /*overhead=*/60e-6,
    /*blas fp32, fp64=*/39.0e9, 19.7e9,
    /*tile_s fp32, fp64=*/580e-9, 1590e-9,
    /*step_s int8, tile_s int8=*/563e-9, 0,
    /*split_pack int8=*/2.59e9, /*recon int8=*/5.9e8, /*fold int8=*/9.1e8,
};

// reference: measured on a 2-core AMD EPYC Zen 3 without AVX-512, shared with other jobs
// (load average about 5): the portable scan, split and reconstruction and the scalar
// micro-kernel, and Debian's OpenBLAS 0.3.21 on 2 threads. The medians, over the 22 shapes x
// {fp32, fp64-6} of its default sweep, of the rates each run implies, from
// `OPENBLAS_THREAD_TIMEOUT=4 build/bench/amxblas_model_check --calibrate --reps 3` (its
// first version, 3 runs per shape in a row; it now measures in rounds over the sweep)
// (bench/model_check.cc; PhaseTimes split each call): steps 9.8 / 10.5 us, scan
// 1.18 GB/s, split + pack 1.25 / 0.43 GB/s, reconstruction 3.8e9 / 2.26e9 values/s, overhead
// 6-19 us, OpenBLAS 19.9 / 9.6 GFLOP/s per core (FP32 / FP64).
constexpr CostConstants kCost_reference = {
    false, 0, 0, 0, 0,
    /*step_s_fp32=*/9.8e-6, /*step_s_fp64=*/10.5e-6,
    /*scan=*/1.18e9,
    /*split_pack fp32, fp64=*/1.25e9, 0.43e9,
    /*recon fp32, fp64=*/3.8e9, 2.26e9,
    /*overhead=*/15e-6,
    /*blas fp32, fp64=*/19.9e9, 9.6e9,
};

double ceil_div(std::int64_t a, std::int64_t b) { return double((a + b - 1) / b); }
double ru(std::int64_t a) { return ceil_div(a, kCostTile) * kCostTile; }

// The driver's output blocks (kernels/bf16/chunking.h, Blocking): 256 x 256, halved in both
// directions down to 64 x 64 while the call has fewer than 8 blocks per thread. Their side.
std::int64_t block_side(std::int64_t m, std::int64_t n, int threads) {
    std::int64_t b = kCostBlock;
    auto blocks = [&](std::int64_t s) { return std::int64_t(ceil_div(m, s) * ceil_div(n, s)); };
    while (threads > 1 && blocks(b) < std::int64_t(kCostBlocksPerThread) * threads && b / 2 >= kCostMinBlock) b /= 2;
    return b;
}

// The real BLAS's time and the sum of the routed phases, from the phases p already has.
void finish(const CostInput& in, const CostConstants& c, const BlasTimeModel* blas, int threads, CostPrediction* p) {
    const bool fp64 = in.precision == kernels::Precision::fp64;
    p->overhead_s = c.overhead_s;
    p->routed_s = p->scan_s + p->split_pack_s + p->products_s + p->reconstruct_s + p->overhead_s;
    const double flops = (in.complex ? 8.0 : 2.0) * double(in.m) * double(in.n) * double(in.k);
    p->blas_flops = flops;
    if (blas && blas->flops_s > 0) {
        const double m = double(in.m), n = double(in.n), k = double(in.k);
        p->blas_s = blas->fixed_s + (flops / blas->flops_s + m * n * blas->c_s + m * k * blas->a_s + k * n * blas->b_s) / threads;
    } else {
        p->blas_s = flops / ((fp64 ? c.blas_flops_s_fp64 : c.blas_flops_s_fp32) * threads);
    }
    p->speedup = p->routed_s > 0 ? p->blas_s / p->routed_s : 0;
}

// The INT8 engine's chunks: its driver's plan (kernels/common/int8_chunk_plan.h).
struct Int8Chunks {
    std::int64_t mc, nc, kc;
};
Int8Chunks int8_chunks(std::int64_t m, std::int64_t n, std::int64_t k, int layers, bool extra, int threads) {
    const kernels::Int8ChunkPlan plan = kernels::plan_int8_chunks(int(m), int(n), int(k), layers, extra, threads);
    return {plan.mc, plan.nc, plan.kc};
}

// The INT8 engine (docs/cost-model.md, "The INT8 engine"): `count` products of INT8 residues,
// one per modulus, plus for auto one product of magnitudes before them (its certificate).
// TDPBSSD does 16 x 16 x 64 multiply-adds where TDPBF16PS does 16 x 16 x 32, at the same
// throughput (assumed: the optimization manual lists both at 16 cycles): 4 per 32 x 32 x 64
// step, 4 TILELOADD per step, 4 TILESTORED per tile and K chunk. The vector backends are taken
// at their INT8 step's time where the row has one (measured), else at their FP64 BF16 step's
// time per multiply-add (twice a BF16 step's time per INT8 step: an assumption); the split and
// reconstruction at the row's INT8 rates, else the FP64 BF16 route's (the reference row).
void predict_int8(const CostInput& in, const CostConstants& c, const BlasTimeModel* blas, int threads,
                  CostPrediction* p) {
    const std::int64_t m = in.m, n = in.complex ? 2 * in.n : in.n, k = in.complex ? 2 * in.k : in.k;
    const bool automatic = in.products == kernels::kFp64Auto;
    const int count = automatic ? kCostInt8AutoModuli : in.products;
    const double products = count + (automatic ? 1 : 0);

    const double tiles = ceil_div(m, kCostTile) * ceil_div(n, kCostTile), steps = ceil_div(k, kCostInt8Kstep);
    const Int8Chunks ch = int8_chunks(m, n, k, count, false, threads);
    const double chunks_k = ceil_div(k, ch.kc);
    const std::int64_t side = block_side(m, n, threads);
    p->blocks = std::int64_t(ceil_div(m, side) * ceil_div(n, side));
    const double per_thread = ceil_div(p->blocks, threads) / double(p->blocks);

    p->product_steps = products * tiles * steps;
    double work_s;
    if (c.tiles) {
        p->tdpbssd = 4 * p->product_steps;
        p->tileloadd = 4 * p->product_steps;
        p->tilestored = 4 * products * tiles * chunks_k;
        work_s = std::max(c.tdp_cycles * p->tdpbssd, c.load_cycles * p->tileloadd + c.store_cycles * p->tilestored) /
                 c.clock_hz;
    } else if (c.step_s_int8 > 0) {
        work_s = p->product_steps * c.step_s_int8 + products * tiles * c.tile_s_int8;
    } else {
        work_s = p->product_steps * 2 * c.step_s_fp64;
    }
    p->products_s = work_s * per_thread;

    // Reconstruction: each modulus's INT32 sums are reduced after every K chunk (auto: the
    // magnitudes added into FP64), the last chunk's turned into FP64 by the CRT; then C is
    // written. The folds of the chunks before the last have a rate of their own where measured.
    const double layer_values = products * ru(m) * ru(n);
    p->recon_values = layer_values + double(m) * n;
    p->fold_values = layer_values * (chunks_k - 1);
    const double recon_rate = c.recon_values_s_int8 > 0 ? c.recon_values_s_int8 : c.recon_values_s_fp64;
    const double fold_rate = c.fold_values_s_int8 > 0 ? c.fold_values_s_int8 : recon_rate;
    p->reconstruct_s = (p->recon_values / recon_rate + p->fold_values / fold_rate) * per_thread;

    // Split + pack: one read of each operand for its facts; then op(A) is packed once per
    // super-block column (once in all with K in one chunk) and op(B) once per row, reading 8
    // bytes and writing one byte per modulus per value; auto first packs the magnitudes (one
    // byte) under its own chunks.
    const double a_bytes = double(m) * k * 8, b_bytes = double(k) * n * 8;
    const double a_layer = ru(m) * ceil_div(k, kCostInt8Kstep) * kCostInt8Kstep;
    const double b_layer = ru(n) * ceil_div(k, kCostInt8Kstep) * kCostInt8Kstep;
    auto packs = [&](const Int8Chunks& x, double layers) {
        const double a_packs = kernels::int8_a_packs({int(x.mc), int(x.nc), int(x.kc)}, int(n), int(k));
        return a_packs * (a_bytes + layers * a_layer) + ceil_div(m, x.mc) * (b_bytes + layers * b_layer);
    };
    double sp_bytes = a_bytes + b_bytes + packs(ch, count);
    if (automatic) sp_bytes += packs(int8_chunks(m, n, k, 1, true, threads), 1);
    p->split_pack_bytes = sp_bytes;
    const double split_rate = c.split_pack_bytes_s_int8 > 0 ? c.split_pack_bytes_s_int8 : c.split_pack_bytes_s_fp64;
    p->split_pack_s = sp_bytes / split_rate / threads;
    finish(in, c, blas, threads, p);
}

}  // namespace

const CostConstants& cost_constants(kernels::Backend b) {
    switch (b) {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, why) \
    case kernels::Backend::id: return kCost_##id;
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    }
    return kCost_reference;
}

namespace {

// The BF16 component products (kernels/bf16/): FP32's method, and FP64's with the bf16 engine.
void predict_bf16(const CostInput& in, const CostConstants& c, const BlasTimeModel* blas, int threads,
                  CostPrediction* out) {
    CostPrediction& p = *out;
    const bool fp64 = in.precision == kernels::Precision::fp64;
    // A complex call is one real GEMM of M x 2N x 2K (kernels/bf16/complex_gemm.cc).
    const std::int64_t m = in.m, n = in.complex ? 2 * in.n : in.n, k = in.complex ? 2 * in.k : in.k;
    // FP64 auto: what it picks on ordinary inputs, 21 products of 6 slices (docs/accuracy.md),
    // plus its certificate's one lower-bound product, on the 6 slices it splits first (all 8
    // only where entries fail at 6: docs/fp64-certificate.md, Section 6).
    const bool fp64_auto = fp64 && in.products == kernels::kFp64Auto;
    const double products = fp64_auto ? 22 : in.products;
    const double slices = fp64_auto ? kernels::kFp64AutoFirstDepth : in.slices;

    const double tiles = ceil_div(m, kCostTile) * ceil_div(n, kCostTile), steps = ceil_div(k, kCostTile);
    const double panels = ceil_div(k, kCostBlock);
    const std::int64_t side = block_side(m, n, threads);
    p.blocks = std::int64_t(ceil_div(m, side) * ceil_div(n, side));
    // The block loop hands whole blocks to the threads: its last round may leave some idle.
    const double per_thread = ceil_div(p.blocks, threads) / double(p.blocks);

    p.product_steps = products * tiles * steps;
    double work_s;  // the block loop's products, one core
    if (c.tiles) {
        // bench/bench_amx.cc tile_counts(): per 32 x 32 x 32 step FP32's fused chain issues
        // 24 TDPBF16PS and 14 TILELOADD, FP64 4 of each per product; 4 stores per product and
        // panel (FP32: 4 per panel). Loads and stores overlap the products.
        p.tdpbf16ps = 4 * p.product_steps;
        p.tileloadd = fp64 ? 4 * p.product_steps : 14 * tiles * steps;
        p.tilestored = (fp64 ? 4 * products : 4) * tiles * panels;
        work_s = std::max(c.tdp_cycles * p.tdpbf16ps, c.load_cycles * p.tileloadd + c.store_cycles * p.tilestored) /
                 c.clock_hz;
    } else {
        work_s = p.product_steps * (fp64 ? c.step_s_fp64 : c.step_s_fp32) +
                 products * tiles * (fp64 ? c.tile_s_fp64 : c.tile_s_fp32);
    }
    p.products_s = work_s * per_thread;

    // Reconstruction: FP32 adds each panel after the first into the block accumulator, FP64
    // widen-adds every product's tile; both then write C (M x N values).
    const double values = (fp64 ? products * ru(m) * ru(n) * panels : ru(m) * ru(n) * (panels - 1)) + double(m) * n;
    p.recon_values = values;
    p.reconstruct_s = values / (fp64 ? c.recon_values_s_fp64 : c.recon_values_s_fp32) * per_thread;

    // Split + pack: each pass reads op(A) or op(B) and writes slices in BF16 (bench_main.cc
    // sp_bytes). The driver's chunks (kernels/common/chunk_plan.h, the same plan): op(A) is
    // split once per super-block column, op(B) once per row; FP64 auto first splits each once
    // more for its facts, which a call in one chunk keeps: 6 slices, then per chunk the lower
    // bound's slice 0 and the products' 6 (its chunks are planned for 8 slices and a spare). A
    // fixed count does without that pass, its guessed scales holding on ordinary data
    // (kernels/bf16/fp64_gemm.cc): on several super-blocks they are checked on the first chunk
    // of each operand, split once more.
    const double elem = fp64 ? 8 : 4;
    const double a_bytes = double(m) * k * elem, b_bytes = double(k) * n * elem;
    const double a_slice = 2.0 * ru(m) * ru(k), b_slice = 2.0 * ru(n) * ru(k);
    const int slots = fp64_auto ? kernels::kFp64Slices + 1 : int(slices);
    const kernels::ChunkShape shape{kCostTile, kCostTile, kCostTile, int(side), int(side)};
    const std::size_t budget = in.chunk_budget_bytes ? in.chunk_budget_bytes : kernels::kChunkBudgetBytes;
    const kernels::Chunking ch =
        kernels::plan_chunks(shape, int(m), int(n), int(k), slots, fp64 ? 8 : 4, threads, fp64 ? 8 : 1, budget);
    const bool single = ch.mc >= m && ch.nc >= n && ch.kc >= k;
    const double a_passes = single ? 1 : ceil_div(n, ch.nc), b_passes = single ? 1 : ceil_div(m, ch.mc);
    const double pass_slices = fp64_auto ? 7 : slices;  // per chunk pass
    double sp_bytes = a_passes * (a_bytes + pass_slices * a_slice) + b_passes * (b_bytes + pass_slices * b_slice);
    if (fp64_auto) sp_bytes += a_passes * a_bytes + b_passes * b_bytes;  // the lower bound reads them again
    const bool one_super = ch.mc >= m && ch.nc >= n;
    if (fp64 && single) sp_bytes = a_bytes + b_bytes + slices * (a_slice + b_slice);  // the facts pass is the pack
    else if (fp64 && fp64_auto) sp_bytes += a_bytes + b_bytes + slices * (a_slice + b_slice);
    else if (fp64 && !one_super) {
        const double kc = std::min<double>(ch.kc, k);
        sp_bytes += (std::min<double>(ch.mc, m) + std::min<double>(ch.nc, n)) * kc * (elem + 2.0 * slices);
    }
    const double in_bytes = a_bytes + b_bytes;
    p.split_pack_bytes = sp_bytes;
    p.scan_bytes = fp64 ? 0 : in_bytes;
    p.split_pack_s = sp_bytes / (fp64 ? c.split_pack_bytes_s_fp64 : c.split_pack_bytes_s_fp32) / threads;
    // The FP32 domain scan reads op(A) and op(B) once; FP64 reads them once for the exponents
    // (counted in its split + pack rate's calibration, as the fused scan used to be).
    p.scan_s = fp64 ? 0 : in_bytes / c.scan_bytes_s / threads;
    finish(in, c, blas, threads, &p);
}

}  // namespace

#define AMXBLAS_COST_FIELD(name) {#name, &CostConstants::name}
const CostField kCostFields[] = {
    AMXBLAS_COST_FIELD(tdp_cycles),          AMXBLAS_COST_FIELD(load_cycles),
    AMXBLAS_COST_FIELD(store_cycles),        AMXBLAS_COST_FIELD(clock_hz),
    AMXBLAS_COST_FIELD(step_s_fp32),         AMXBLAS_COST_FIELD(step_s_fp64),
    AMXBLAS_COST_FIELD(scan_bytes_s),        AMXBLAS_COST_FIELD(split_pack_bytes_s_fp32),
    AMXBLAS_COST_FIELD(split_pack_bytes_s_fp64), AMXBLAS_COST_FIELD(recon_values_s_fp32),
    AMXBLAS_COST_FIELD(recon_values_s_fp64), AMXBLAS_COST_FIELD(overhead_s),
    AMXBLAS_COST_FIELD(blas_flops_s_fp32),   AMXBLAS_COST_FIELD(blas_flops_s_fp64),
    AMXBLAS_COST_FIELD(tile_s_fp32),         AMXBLAS_COST_FIELD(tile_s_fp64),
    AMXBLAS_COST_FIELD(step_s_int8),         AMXBLAS_COST_FIELD(tile_s_int8),
    AMXBLAS_COST_FIELD(split_pack_bytes_s_int8), AMXBLAS_COST_FIELD(recon_values_s_int8),
    AMXBLAS_COST_FIELD(fold_values_s_int8),
};
#undef AMXBLAS_COST_FIELD
const int kCostFieldCount = sizeof kCostFields / sizeof kCostFields[0];
static_assert(sizeof kCostFields / sizeof kCostFields[0] <= 64, "CostTable::measured has a bit per field");
static_assert(sizeof(CostConstants) == sizeof(double) * (1 + sizeof kCostFields / sizeof kCostFields[0]),
              "kCostFields names every number of CostConstants (and `tiles`, the one flag, is first)");

CostTable builtin_cost_table(kernels::Backend b) {
    CostTable t;
    t.phases = cost_constants(b);
    return t;
}

CostPrediction predict_cost(const CostInput& in, const CostTable& t) {
    const int r = blas_routine_index(in.precision, in.complex);
    return predict_cost(in, t.phases, t.blas_measured[r] ? &t.blas[r] : nullptr);
}

CostPrediction predict_cost(const CostInput& in, const CostConstants& c, const BlasTimeModel* blas) {
    CostPrediction p;
    const int threads = std::max(1, in.threads);
    if (in.precision != kernels::Precision::fp64) {
        predict_bf16(in, c, blas, threads, &p);
        return p;
    }
    // FP64: the cost model of the engine (kernels/common/engines.def's cost column); the
    // automatic engine's is the base engine's.
    switch (in.engine == kernels::Fp64Engine::automatic ? kernels::kFp64BaseEngine : in.engine) {
#define AMXBLAS_FP64_ENGINE(id, min_count, max_count, counts, unit, cost) \
    case kernels::Fp64Engine::id: predict_##cost(in, c, blas, threads, &p); break;
#include "kernels/common/engines.def"
#undef AMXBLAS_FP64_ENGINE
        case kernels::Fp64Engine::automatic: break;
    }
    return p;
}

}  // namespace amxblas

// The per-call cost model behind AMXBLAS_SHAPES=auto (docs/cost-model.md): from a call's sizes,
// its route, the backend and the thread count it predicts the routed call's time phase by phase
// and the real BLAS's time, so that decide() routes only the calls that gain. Pure: it reads
// no matrix and no environment; its constants are one table (cost_model.cc), each with its
// source. The counts follow the kernels' blocking (kernels/isa/microkernel.h,
// kernels/bf16/macro_kernel.h), restated here because the policy may include only
// kernels/common/; the policy tests check that the two agree (tests/policy/test_cost_model.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/gemm_types.h"
#include "kernels/common/variants.h"

namespace amxblas {

// The kernels' geometry as the model counts it: 32 x 32 x 32 micro-kernel steps in
// 256 x 256 x 256 blocks, cut down to 64 x 64 for calls with fewer than 8 blocks per thread.
inline constexpr int kCostTile = 32, kCostBlock = 256, kCostMinBlock = 64, kCostBlocksPerThread = 8;
// The INT8 engine's K step (kAmxInt8Geometry); its chunks are kernels/common/int8_chunk_plan.h's.
inline constexpr int kCostInt8Kstep = 64;
// INT8 auto on ordinary inputs: 16 moduli (kernels/int8/int8_certificate.h: on uniform data 14
// certify, and auto goes on to 15 at N = 512, 16 at N = 1024, to reach a unit roundoff of |A||B|).
inline constexpr int kCostInt8AutoModuli = 16;

// A call routes where predicted speedup >= this margin: 10% headroom for the model's error
// (its calibrated phases were within about 30% of measured times, docs/cost-model.md) without
// forwarding the calls the paper's regime routes on AMX.
inline constexpr double kCostMargin = 1.1;

// One backend's constants, all per core (the phases are assumed to scale with the threads).
struct CostConstants {
    // Products: AMX by tile-instruction cycles; the vector backends by seconds per BF16 product
    // of one 32 x 32 x 32 micro-kernel step.
    bool tiles = false;
    double tdp_cycles = 0, load_cycles = 0, store_cycles = 0, clock_hz = 0;
    double step_s_fp32 = 0, step_s_fp64 = 0;
    double scan_bytes_s = 0;                          // FP32 domain scan (FP64 calls skip it)
    double split_pack_bytes_s_fp32 = 0, split_pack_bytes_s_fp64 = 0;
    double recon_values_s_fp32 = 0, recon_values_s_fp64 = 0;  // panel adds / widen-adds, C writes
    double overhead_s = 0;                            // per routed call: thread wake-up, set-up
    double blas_flops_s_fp32 = 0, blas_flops_s_fp64 = 0;      // the real BLAS, FLOP/s per core
    // Vector backends: seconds per product and 32 x 32 output tile, on top of its steps (the
    // tile's accumulators set up, stored and widened: what a short K does not amortise).
    double tile_s_fp32 = 0, tile_s_fp64 = 0;
    // The INT8 engine where measured (0: the FP64 BF16 route's rates stand in): seconds per
    // 32 x 32 x 64 INT8 step and per tile (vector backends), its facts + residue split and
    // pack in bytes/s, and its reconstruction in values/s (each value one modulus of one
    // entry): the last K chunk's (fold, CRT, C's write), and the folds of the K chunks before
    // it into the kept residues (0: at the reconstruction's rate).
    double step_s_int8 = 0, tile_s_int8 = 0;
    double split_pack_bytes_s_int8 = 0, recon_values_s_int8 = 0, fold_values_s_int8 = 0;
};

const CostConstants& cost_constants(kernels::Backend b);

// The constants by name (the wisdom file's names, amxblas-explain's rows): every number of
// CostConstants, in its order.
struct CostField {
    const char* name;
    double CostConstants::*member;
};
extern const CostField kCostFields[];
extern const int kCostFieldCount;

// The real BLAS's time for one routine as calibration fits it (docs/cost-model.md, "Wisdom"):
//     fixed_s + (flops / flops_s + M N c_s + M K a_s + K N b_s) / T
// with flops 2 M N K (8 for CGEMM and ZGEMM), all per core: a fixed cost per call, the work at a
// rate, and a cost per value of C, op(A) and op(B) (their reads, packing and C's write, which
// dominate a call short in one dimension). Linear in its five numbers: calibration fits them by
// non-negative least squares on relative errors.
struct BlasTimeModel {
    double fixed_s = 0, flops_s = 0, c_s = 0, a_s = 0, b_s = 0;
};
// SGEMM, DGEMM, CGEMM, ZGEMM: the index of a call's BlasTimeModel.
inline constexpr int kBlasRoutineCount = 4;
inline int blas_routine_index(kernels::Precision p, bool complex) {
    return (complex ? 2 : 0) + (p == kernels::Precision::fp64 ? 1 : 0);
}
inline constexpr const char* kBlasRoutineNames[kBlasRoutineCount] = {"sgemm", "dgemm", "cgemm", "zgemm"};

// One backend's constants as this process uses them: measured where a wisdom entry gave them
// (bit i of `measured`: kCostFields[i]; blas_measured[r]: the real BLAS's routine r), the
// built-in ones of cost_constants() elsewhere. A routine whose real BLAS was not measured is
// priced at the phases' blas_flops_s_* (one rate per precision, as built in).
struct CostTable {
    CostConstants phases;
    unsigned long long measured = 0;
    BlasTimeModel blas[kBlasRoutineCount];
    bool blas_measured[kBlasRoutineCount] = {};
};
// The built-in table of backend b: nothing measured.
CostTable builtin_cost_table(kernels::Backend b);

struct CostInput {
    kernels::Precision precision = kernels::Precision::fp32;
    bool complex = false;             // CGEMM/ZGEMM: one real GEMM of M x 2N x 2K (complex_gemm.cc)
    std::int64_t m = 0, n = 0, k = 0;
    int products = 6;                 // the route's products; kernels::kFp64Auto for auto
    int slices = 3;                   // the route's slices (split + pack writes this many)
    // FP64: the engine whose cost is predicted. int8: `products` INT8 moduli (kernels/int8/), or
    // kFp64Auto for INT8's auto; slices is then not read.
    kernels::Fp64Engine engine = kernels::Fp64Engine::bf16;
    kernels::Backend backend = kernels::Backend::amx;
    int threads = 1;                  // of the routed call; the real BLAS is given as many
    // BF16 routes: the chunk budget of the driver's plan (kernels/common/chunk_plan.h); 0 for
    // the driver's own. A larger one models splitting whole operands (the benchmark's
    // comparison, bench/chunk_model.cc).
    std::size_t chunk_budget_bytes = 0;
};

// Seconds per phase, on `threads` threads.
struct CostPrediction {
    double scan_s = 0, split_pack_s = 0, products_s = 0, reconstruct_s = 0, overhead_s = 0;
    double routed_s = 0;    // their sum
    double blas_s = 0;      // the real BLAS on the same threads
    double speedup = 0;     // blas_s / routed_s
    // The counts behind them (AMX: the harness's instruction counts, bench/bench_amx.cc).
    // INT8: product_steps counts 32 x 32 x 64 steps, and its tile products are in tdpbssd.
    double product_steps = 0, tdpbf16ps = 0, tdpbssd = 0, tileloadd = 0, tilestored = 0;
    double scan_bytes = 0, split_pack_bytes = 0, recon_values = 0, blas_flops = 0;
    double fold_values = 0;  // INT8: the folds of the K chunks before the last (recon_values: the rest)
    std::int64_t blocks = 0;
};

// blas: the real BLAS's measured time for this routine, or nullptr for c's single rate.
CostPrediction predict_cost(const CostInput& in, const CostConstants& c, const BlasTimeModel* blas = nullptr);
inline CostPrediction predict_cost(const CostInput& in) { return predict_cost(in, cost_constants(in.backend)); }
// With a process's table (its backend's): the measured real BLAS where it has one.
CostPrediction predict_cost(const CostInput& in, const CostTable& t);

}  // namespace amxblas

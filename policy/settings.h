// The user's configuration, as plain values. shim/config.cc fills it once from the
// environment; the policy reads it. Defaults here are the documented defaults
// (docs/configuration.md).
#pragma once

#include <cstddef>
#include <string>

#include "kernels/common/gemm_types.h"

namespace amxblas {

// AMXBLAS_SHAPES: square (M = N = K only), any (every shape), or auto: every shape, routed only
// where the cost model (policy/cost_model.h) predicts a gain of at least kCostMargin.
enum class ShapeRule { square, any, automatic };
// AMXBLAS_BACKEND: auto, or a backend of kernels/common/backends.def by name (the backends in the
// table's order after automatic: BackendChoice(int(b) + 1) is backend b).
enum class BackendChoice {
    automatic,
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) id,
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
};

struct Settings {
    bool fp32 = true;            // AMXBLAS_FP32: route eligible SGEMM calls
    // AMXBLAS_FP64_ENGINE: bf16, int8, or automatic (auto: under fp64_products = auto the kernels
    // try INT8's certificate first, then BF16's auto; a fixed count means BF16, so that
    // AMXBLAS_FP64_PRODUCTS=21 stays the paper's experiment).
    kernels::Fp64Engine fp64_engine = kernels::Fp64Engine::automatic;
    // AMXBLAS_FP64_PRODUCTS: 0 (no DGEMM routed), or -1 for "auto" (kernels::kFp64Auto: the
    // kernels pick per call, certified per entry); else, under the bf16 and auto engines, the
    // BF16 products 6, 10, 15, 21, 28 or 36, under the int8 engine the INT8 moduli 6 ... 24.
    int fp64_products = 0;
    double fp64_tol = 1;         // AMXBLAS_FP64_TOL: auto's accepted factor over DGEMM's bound
    // AMXBLAS_MIN_N: smallest M, N and K that are routed. 256 is the paper's smallest measured
    // order, where AMX-FP32 was 2.56x SGEMM (the paper's Figure 7); below one 256x256x256 block the
    // split/pack overhead is not amortised.
    int min_n = 256;
    ShapeRule shapes = ShapeRule::automatic;          // AMXBLAS_SHAPES
    BackendChoice backend = BackendChoice::automatic; // AMXBLAS_BACKEND
    int num_threads = 1;          // AMXBLAS_NUM_THREADS, else OMP_NUM_THREADS, else all cores
    int verbose = 0;              // AMXBLAS_VERBOSE: 0, 1 (summary), 2 (one line per call)
    std::string log_path;         // AMXBLAS_LOG, empty: stderr
    int summary_every_s = 0;      // AMXBLAS_SUMMARY_EVERY: seconds between summaries (0: at exit only)
    std::string fallback;         // AMXBLAS_FALLBACK, empty: libopenblas.so.0, else libblas.so.3
    // AMXBLAS_MAX_WORKSPACE_MB: cap on the component buffers of one call (0: no cap).
    std::size_t workspace_cap_bytes = 0;
    // AMXBLAS_RECORD: folder that receives one .gemm file per recorded call (shim/record.h);
    // empty: nothing is recorded. The policy never reads these three.
    std::string record_dir;
    bool record_all = false;  // AMXBLAS_RECORD_ALL: every call, not only accuracy:uncertified
    // AMXBLAS_RECORD_MAX_MB: bytes of .gemm files one process writes at most.
    std::size_t record_max_bytes = std::size_t{256} << 20;
    // AMXBLAS_WISDOM: the wisdom file whose measured constants the cost model uses (shim/wisdom.h),
    // "none" for the built-in ones; empty: the per-user default file. The policy never reads it.
    std::string wisdom;
};

}  // namespace amxblas

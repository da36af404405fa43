// The routing decision: a small pure function of (call, settings, hardware) that returns a
// route and the reason for it. It reads no environment variable, touches no matrix and has no
// state, so tests/policy drives it directly. (The cost model's arithmetic runs under the
// library's floating-point environment, kernels/common/fp_environment.h, which gives the
// caller's MXCSR back as it was: the decision and the caller's flags do not depend on it.) The numeric-domain scans that need the matrices are in
// policy/domain.h; the shim runs them after a call passes this decision.
#pragma once

#include <cstdint>

#include "kernels/common/engine_table.h"
#include "kernels/common/gemm_types.h"
#include "kernels/common/variants.h"
#include "policy/cost_model.h"
#include "policy/settings.h"

namespace amxblas {

using Precision = kernels::Precision;

// beta_scale: K = 0 or ALPHA = 0, so C := BETA*C, done by the shim itself exactly as the
// reference BLAS does it (A and B never read). Forwarding is not enough: OpenBLAS 0.3.21
// computes 0*A*B for ALPHA = 0 and lets a NaN or Inf in A or B reach C.
// The emulated routes are the variants of kernels/common/variants.def, in its order.
enum class Route {
    forward,
    beta_scale,
#define AMXBLAS_VARIANT(id, route, precision, slices, products, depth) amx_##id,
#include "kernels/common/variants.def"
#undef AMXBLAS_VARIANT
    amx_fp64_auto,  // AMXBLAS_FP64_PRODUCTS=auto: the kernels pick an engine and a count per call
    // One route per engine of kernels/common/engines.def whose fixed counts are no variants
    // (counts = range): AMXBLAS_FP64_ENGINE=<id> with a fixed count, amx_fp64_int8 for the INT8
    // engine's moduli, a count the route does not carry (route_products(r, settings)). Last:
    // kRouteCount counts them.
#define AMXBLAS_FP64_ENGINE_ROUTE_range(id) amx_fp64_##id,
#define AMXBLAS_FP64_ENGINE_ROUTE_variants(id)
#define AMXBLAS_FP64_ENGINE(id, min_count, max_count, counts, unit, cost) AMXBLAS_FP64_ENGINE_ROUTE_##counts(id)
#include "kernels/common/engines.def"
#undef AMXBLAS_FP64_ENGINE
#undef AMXBLAS_FP64_ENGINE_ROUTE_range
#undef AMXBLAS_FP64_ENGINE_ROUTE_variants
};
inline constexpr int kRouteCount = static_cast<int>(Route::amx_fp64_auto) + 1 + kernels::kFp64RangeEngines;

// The variant of an emulated route; nullptr for forward and beta_scale.
const kernels::Variant* route_variant(Route r);

// "fp32", "fp64-10", ..., "fp64-int8", "beta-scale" or "forward": the log's route= field.
const char* route_name(Route r);
// An FP64 variant's product count -> its route, kernels::kFp64Auto -> amx_fp64_auto; else forward.
Route fp64_route(int products);
// The route of AMXBLAS_FP64_PRODUCTS under an engine: a fixed count under an engine with a
// route of its own (int8) -> that route (the settings checked its range; the kernels refuse one
// outside it with config:fp64-products); everything else as fp64_route(products): under the
// auto engine a fixed count is the base engine's (BF16's products).
Route fp64_route(kernels::Fp64Engine engine, int products);
// The route of a call engine e ran with `products` (Fp64AutoReport): e's own route, or the
// variant's for the engine whose counts are the variants.
Route fp64_route_ran(kernels::Fp64Engine e, int products);
// The variant's products (6 for FP32), kernels::kFp64Auto for amx_fp64_auto; 0 for forward,
// beta_scale and the engines' routes (whose count is the settings').
int route_products(Route r);
// The count the kernels run on route r under s (RunOptions::fp64_products): s.fp64_products,
// the INT8 moduli, on an engine's route; route_products(r) otherwise.
int route_products(Route r, const Settings& s);
// False for the engines' routes (amx_fp64_int8), whose count the route does not name.
bool route_carries_count(Route r);
// True for the routes that run an FP64 engine (DGEMM, ZGEMM).
bool route_is_fp64(Route r);
// The engine a fixed FP64 route runs: an engine's route, its engine; a variant's route, the
// engine whose counts are the variants (bf16).
kernels::Fp64Engine route_engine(Route r);

// One GEMM call in column-major form (a row-major CBLAS call is converted before this).
struct GemmCall {
    Precision precision;
    bool complex = false;  // CGEMM/ZGEMM: the cost model counts them as M x 2N x 2K real GEMMs
    char transa, transb;
    std::int64_t m, n, k, lda, ldb, ldc;  // 64-bit: an ILP64 caller's values, unconverted
    bool alpha_is_zero;
    // The caller's rounding mode is round to nearest even (kernels/common/fp_environment.h):
    // the emulation computes what it promises under no other.
    bool rounds_to_nearest = true;
    // Threads: true when called from inside an OpenMP parallel region.
    bool in_parallel_region = false;
    // Routed calls already running in other application threads.
    int concurrent_routed_calls = 0;
    // Threads those calls use in all (the sum of their Decision::threads), or -1 when
    // the caller does not track it; then each call assumes an equal share of the cores.
    int threads_in_use = -1;
};

struct Hardware {
    // runs[b]: backend b was built into the library and this CPU and OS can run it
    // (kernels/common/backends.def, indexed by kernels::Backend).
    bool runs[kernels::kBackendCount] = {};
    bool amx_emulator = false;   // the trap-and-emulate harness is loaded (tests only)
    int cores = 1;
    bool can_run(kernels::Backend b) const { return runs[static_cast<int>(b)]; }
    void set_runs(kernels::Backend b, bool v) { runs[static_cast<int>(b)] = v; }
};

struct Decision {
    Route route = Route::forward;
    const char* reason = nullptr;  // why it was forwarded or only scaled; nullptr when routed
    kernels::Backend backend = kernels::Backend::reference;
    int threads = 1;
    const char* threads_note = nullptr;  // why fewer threads than configured, if so
    // AMXBLAS_SHAPES=auto: the cost model's predicted speedup over the real BLAS for the
    // backend asked for (policy/cost_model.h); 0 when the model was not consulted.
    double predicted_speedup = 0;
    // Its predicted times (seconds) of the routed call and of the real BLAS's, on `threads`
    // threads as the model gives them; 0 when it was not consulted. The log compares the one
    // of the path taken with the call's time (mispredicted=); nothing else reads them.
    double predicted_routed_s = 0, predicted_blas_s = 0;
};

// The cost model's input for this call on route r (an emulated one) under settings s (the INT8
// route's count, the engine auto runs), backend b and threads: what decide() asks the model
// under AMXBLAS_SHAPES=auto, and amxblas-explain prints.
// costs (nullptr: built in): under the auto engine, auto is priced as INT8 auto where this
// table has the INT8 engine's step, split + pack and reconstruction measured (it runs first,
// and its certificate passes on ordinary inputs), as BF16 auto where they are built in (on AMX
// they are assumptions: docs/cost-model.md).
CostInput cost_input(const GemmCall& call, Route r, const Settings& s, kernels::Backend b, int threads,
                     const CostTable* costs = nullptr);

// The parameter number the reference BLAS xerbla would report for these column-major GEMM
// arguments (1 = TRANSA ... 13 = LDC), or 0 when they are valid.
int gemm_invalid_parameter(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                           std::int64_t lda, std::int64_t ldb, std::int64_t ldc);

// True when OpenBLAS accepts these arguments (it computes the call) although the reference
// BLAS rejects them: TRANS = 'R', or a leading dimension of 0 for an operand without rows.
bool gemm_accepted_by_openblas(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                               std::int64_t lda, std::int64_t ldb, std::int64_t ldc);

// The checks, in order; the first that fails is the reason (docs/reasons.md):
//   args:invalid, args:nonstandard, size:empty           the call itself (forwarded: the real
//                                                        BLAS reports xerbla, computes or returns;
//                                                        nonstandard: OpenBLAS computes it)
//   size:too-large                                       M, N or K above INT_MAX (ILP64 calls)
//   size:k-zero, alpha:zero                              route beta_scale (C := BETA*C)
//   fp32:disabled / fp64:disabled                        the user's configuration
//   shape:not-square, size:below-min-n                   the call against the configuration
//   fenv:rounding                                        the caller rounds other than to nearest
//   cost:no-gain                                         AMXBLAS_SHAPES=auto: the cost model
//                                                        predicts less than kCostMargin for the
//                                                        backend asked for (auto: amx)
//   backend:no-amx / backend:no-avx512-bf16              the machine (kernels/common/backends.def)
// Call-dependent reasons come before the machine's, so that on a machine without AMX the log
// still tells which calls would be routed on one.
// A routed call gets threads = min(settings.num_threads, hw.cores) (note threads:above-cores
// when that cut it), 1 inside an OpenMP parallel region (threads:in-parallel-region), and at
// most the cores the other routed calls leave free (threads:concurrent-calls): the cores
// minus call.threads_in_use when known, else cores / (concurrent_routed_calls + 1). A note is
// set only when it lowered the count.
// The backend the settings ask for, the one AMXBLAS_SHAPES=auto's cost model is asked about
// (that of `costs` below): auto asks for the table's first row (amx).
kernels::Backend asked_backend(BackendChoice choice);

// costs: the cost model's constants for the backend asked for (auto: amx) as this process has
// them, measured where its wisdom has them (shim/wisdom.h); nullptr: the built-in ones.
Decision decide(const GemmCall& call, const Settings& settings, const Hardware& hw,
                const CostTable* costs = nullptr);

// False when decide() settles the call on the call and the configuration alone (every check up
// to fenv:rounding): then its thread facts (in_parallel_region, concurrent_routed_calls,
// threads_in_use) are not read, and the shim does not ask for them (asking the OpenMP runtime
// costs a walk of the loaded objects under the loader's lock until one is found).
bool needs_thread_facts(const GemmCall& call, const Settings& settings);

// True when decide() forwards a call of this precision and these sizes whatever its other
// arguments: one that forms a product (K != 0, ALPHA != 0: else it may be beta-scale) of a
// precision the settings do not route, or with a size below AMXBLAS_MIN_N (an invalid or empty
// call is forwarded too). Inline, without floating-point arithmetic or a lookup: the shim's
// path for such calls when there is nothing to log or record, which must cost next to nothing
// next to the real BLAS's own tiny call (tests/policy/test_fast_path.cc checks it against decide()).
inline bool forwarded_whatever_else(Precision p, std::int64_t m, std::int64_t n, std::int64_t k,
                                    bool alpha_is_zero, const Settings& s) {
    if (k == 0 || alpha_is_zero) return false;
    if (p == Precision::fp32 ? !s.fp32 : s.fp64_products == 0) return true;  // fp64_route(e, 0) forwards
    return m < s.min_n || n < s.min_n || k < s.min_n;
}

}  // namespace amxblas

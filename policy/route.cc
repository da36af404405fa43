#include "policy/route.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <string_view>

#include "kernels/common/fp_environment.h"
#include "policy/cost_model.h"
#include "policy/reasons.h"

namespace amxblas {

namespace {
constexpr int kFirstVariantRoute = static_cast<int>(Route::beta_scale) + 1;
constexpr int kFirstEngineRoute = static_cast<int>(Route::amx_fp64_auto) + 1;

// The engine whose route r is (engines.def, counts = range), or nullptr.
const kernels::Fp64EngineRow* route_engine_row(Route r) {
    int at = static_cast<int>(r) - kFirstEngineRoute;
    if (at < 0) return nullptr;
    for (const kernels::Fp64EngineRow& e : kernels::kFp64Engines)
        if (e.counts == kernels::Fp64Counts::range && at-- == 0) return &e;
    return nullptr;
}

// Engine e's own route (e's counts are range).
Route engine_route(kernels::Fp64Engine e) {
    return static_cast<Route>(kFirstEngineRoute + kernels::fp64_range_engines_before(static_cast<int>(e)));
}

bool has_own_route(kernels::Fp64Engine e) { return kernels::fp64_engine_row(e).counts == kernels::Fp64Counts::range; }
}  // namespace

const kernels::Variant* route_variant(Route r) {
    return kernels::variant_at(static_cast<int>(r) - kFirstVariantRoute);
}

const char* route_name(Route r) {
    if (r == Route::beta_scale) return "beta-scale";
    if (r == Route::amx_fp64_auto) return "fp64-auto";
    if (const kernels::Fp64EngineRow* e = route_engine_row(r)) return e->route;
    const kernels::Variant* v = route_variant(r);
    return v ? v->route : "forward";
}

Route fp64_route(int products) {
    if (products == kernels::kFp64Auto) return Route::amx_fp64_auto;
    const kernels::Variant* v = kernels::fp64_variant(products);
    return v ? static_cast<Route>(kFirstVariantRoute + (v - kernels::kVariants)) : Route::forward;
}

Route fp64_route(kernels::Fp64Engine engine, int products) {
    const kernels::Fp64Engine e = engine == kernels::Fp64Engine::automatic ? kernels::kFp64BaseEngine : engine;
    if (has_own_route(e) && products > 0) return engine_route(e);
    return fp64_route(products);
}

Route fp64_route_ran(kernels::Fp64Engine e, int products) {
    return has_own_route(e) ? engine_route(e) : fp64_route(products);
}

int route_products(Route r) {
    if (r == Route::amx_fp64_auto) return kernels::kFp64Auto;
    const kernels::Variant* v = route_variant(r);
    return v ? v->products : 0;
}

int route_products(Route r, const Settings& s) {
    return route_engine_row(r) ? s.fp64_products : route_products(r);
}

bool route_carries_count(Route r) { return route_engine_row(r) == nullptr; }

bool route_is_fp64(Route r) {
    if (r == Route::amx_fp64_auto || route_engine_row(r)) return true;
    const kernels::Variant* v = route_variant(r);
    return v && v->precision == kernels::Precision::fp64;
}

kernels::Fp64Engine route_engine(Route r) {
    if (const kernels::Fp64EngineRow* e = route_engine_row(r)) return e->id;
    return kernels::fp64_variants_engine();
}

namespace {

bool is_trans_char(char t) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(t)));
    return u == 'N' || u == 'T' || u == 'C';
}
using kernels::is_no_trans;

// The forward reason when backend b cannot run here (kernels/common/backends.def); nullptr for a
// backend every machine runs.
const char* unusable_reason(kernels::Backend b) {
    switch (b) {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, why) \
    case kernels::Backend::id: return reason::why;
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    }
    return reason::backend_no_amx;
}

// Which backend the user asked for, if this machine can run it. auto takes the table's first
// row only, and only on the real CPU: the emulator is a test harness, never chosen unless the
// AMX backend is asked for by name.
const char* pick_backend(BackendChoice choice, const Hardware& hw, kernels::Backend* out) {
    if (choice == BackendChoice::automatic) {
        const kernels::Backend first = kernels::kAllBackends[0];
        if (!hw.can_run(first)) return unusable_reason(first);
        *out = first;
        return nullptr;
    }
    const kernels::Backend b = kernels::kAllBackends[static_cast<int>(choice) - 1];
    const bool emulated = b == kernels::Backend::amx && hw.amx_emulator;
    const char* why = unusable_reason(b);
    if (why && !hw.can_run(b) && !emulated) return why;
    *out = b;
    return nullptr;
}

}  // namespace

kernels::Backend asked_backend(BackendChoice choice) {
    return choice == BackendChoice::automatic ? kernels::kAllBackends[0]
                                              : kernels::kAllBackends[static_cast<int>(choice) - 1];
}

// OpenBLAS's checks (interface/gemm.c), looser than the reference BLAS's: TRANS = 'R'
// (conjugate, no transpose; 'N' for real data) is accepted, and a leading dimension only has to
// cover the operand's rows, so 0 is accepted for an operand without rows (M = 0 and LDC = 0).
bool gemm_accepted_by_openblas(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                               std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    auto trans_ok = [](char t) { return is_trans_char(t) || t == 'R' || t == 'r'; };
    auto no_trans = [](char t) { return is_no_trans(t) || t == 'R' || t == 'r'; };
    if (!trans_ok(transa) || !trans_ok(transb) || m < 0 || n < 0 || k < 0) return false;
    return lda >= (no_trans(transa) ? m : k) && ldb >= (no_trans(transb) ? k : n) && ldc >= m;
}

// The order of the checks is the reference BLAS's (sgemm.f / dgemm.f), so the parameter
// number matches what its xerbla would report.
int gemm_invalid_parameter(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                           std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    const std::int64_t nrowa = is_no_trans(transa) ? m : k;
    const std::int64_t nrowb = is_no_trans(transb) ? k : n;
    if (!is_trans_char(transa)) return 1;
    if (!is_trans_char(transb)) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < std::max<std::int64_t>(1, nrowa)) return 8;
    if (ldb < std::max<std::int64_t>(1, nrowb)) return 10;
    if (ldc < std::max<std::int64_t>(1, m)) return 13;
    return 0;
}

namespace {

// The INT8 engine's own rates were measured into this table (wisdom), not built in.
bool int8_measured(const CostTable* costs) {
    if (!costs) return false;
    int found = 0;
    for (int i = 0; i < kCostFieldCount; ++i) {
        const std::string_view name = kCostFields[i].name;
        if ((name == "step_s_int8" || name == "split_pack_bytes_s_int8" || name == "recon_values_s_int8") &&
            (costs->measured >> i & 1))
            ++found;
    }
    return found == 3;
}

}  // namespace

CostInput cost_input(const GemmCall& call, Route r, const Settings& s, kernels::Backend b, int threads,
                     const CostTable* costs) {
    CostInput in;
    in.precision = call.precision;
    in.complex = call.complex;
    in.m = call.m;
    in.n = call.n;
    in.k = call.k;
    in.products = route_products(r, s);
    const kernels::Variant* v = route_variant(r);
    in.slices = v ? v->slices : kernels::kFp64Slices;  // FP64 auto splits every slice
    // The cost of the engine that runs the route: a fixed route's engine; auto under an engine
    // named in the settings, that engine. Auto under the auto engine keeps the base engine's
    // model, BF16 auto's (INT8 runs first there, and BF16 after it where its certificate cannot
    // pass): docs/cost-model.md.
    if (r == Route::amx_fp64_auto)
        in.engine = s.fp64_engine == kernels::Fp64Engine::automatic ? kernels::kFp64BaseEngine : s.fp64_engine;
    else if (route_is_fp64(r))
        in.engine = route_engine(r);
    // With measured INT8 rates (wisdom), auto under the auto engine is priced as INT8, which
    // runs first and, on the data measured, runs every call.
    if (r == Route::amx_fp64_auto && s.fp64_engine == kernels::Fp64Engine::automatic && int8_measured(costs))
        in.engine = kernels::Fp64Engine::int8;
    in.backend = b;
    in.threads = threads;
    return in;
}

namespace {

// decide()'s checks of the call and the configuration, in its order: true with the decision in
// *d when one of them settles the call (forwarded or beta-scale), else false with the route the
// settings ask for in *route. Reads no thread fact of the call.
bool settled_by_call(const GemmCall& call, const Settings& settings, Decision* d, Route* route) {
    auto forward = [d](const char* reason) {
        d->route = Route::forward;
        d->reason = reason;
        return true;
    };

    // Invalid and empty calls: the real BLAS reports them (xerbla) or returns, exactly as the
    // user's code expects. K = 0 or ALPHA = 0 leaves C := BETA*C, which the shim does itself.
    if (gemm_invalid_parameter(call.transa, call.transb, call.m, call.n, call.k, call.lda,
                               call.ldb, call.ldc) != 0) {
        // Forwarded either way: the real BLAS decides. The log says args:invalid only for
        // arguments no BLAS accepts, not for ones OpenBLAS computes.
        const bool accepted = gemm_accepted_by_openblas(call.transa, call.transb, call.m, call.n, call.k,
                                                        call.lda, call.ldb, call.ldc);
        return forward(accepted ? reason::args_nonstandard : reason::args_invalid);
    }
    if (call.m == 0 || call.n == 0) return forward(reason::size_empty);
    // Beyond INT_MAX only from an ILP64 caller: the shim and kernels count rows, columns and
    // blocks in int, and such a call's component buffers could not be allocated anyway.
    if (std::max({call.m, call.n, call.k}) > INT_MAX) return forward(reason::size_too_large);
    if (call.k == 0 || call.alpha_is_zero) {
        d->route = Route::beta_scale;
        d->reason = call.k == 0 ? reason::size_k_zero : reason::alpha_zero;
        return true;
    }

    if (call.precision == Precision::fp32) {
        if (!settings.fp32) return forward(reason::fp32_disabled);
        *route = Route::amx_fp32;
    } else {
        *route = fp64_route(settings.fp64_engine, settings.fp64_products);
        if (*route == Route::forward) return forward(reason::fp64_disabled);
    }

    if (settings.shapes == ShapeRule::square && !(call.m == call.n && call.n == call.k))
        return forward(reason::shape_not_square);
    if (std::min({call.m, call.n, call.k}) < settings.min_n)
        return forward(reason::size_below_min_n);
    // Directed rounding: the real BLAS computes under the caller's mode, as the caller asked.
    if (!call.rounds_to_nearest) return forward(reason::fenv_rounding);
    return false;
}

}  // namespace

bool needs_thread_facts(const GemmCall& call, const Settings& settings) {
    Decision d;
    Route route;
    return !settled_by_call(call, settings, &d, &route);
}

Decision decide(const GemmCall& call, const Settings& settings, const Hardware& hw, const CostTable* costs) {
    Decision d;
    Route route = Route::forward;
    if (settled_by_call(call, settings, &d, &route)) return d;
    auto forward = [&d](const char* reason) {
        d.route = Route::forward;
        d.reason = reason;
        return d;
    };

    const char* machine = pick_backend(settings.backend, hw, &d.backend);

    // Never oversubscribe: inside an OpenMP region the application already uses the cores;
    // calls from several application threads share them.
    const int cores = std::max(1, hw.cores);
    int threads = std::max(1, settings.num_threads);
    const char* note = nullptr;
    auto lower_to = [&](int limit, const char* why) {
        if (limit < threads) {
            threads = std::max(1, limit);
            note = why;
        }
    };
    lower_to(cores, reason::threads_above_cores);
    if (call.in_parallel_region) {
        lower_to(1, reason::threads_in_parallel_region);
    } else if (call.concurrent_routed_calls > 0) {
        const int free_cores = call.threads_in_use >= 0
                                   ? cores - call.threads_in_use
                                   : cores / (call.concurrent_routed_calls + 1);
        lower_to(std::max(1, free_cores), reason::threads_concurrent_calls);
    }

    // The cost model runs before the machine's check, for the backend asked for (auto: the
    // table's first row, amx), so that a machine without it still logs which calls would gain.
    if (settings.shapes == ShapeRule::automatic) {
        const kernels::Backend b = machine ? asked_backend(settings.backend) : d.backend;
        const kernels::LibraryFpEnvironment own_arithmetic;  // whatever the caller's traps and FTZ
        const CostInput in = cost_input(call, route, settings, b, threads, costs);
        const CostPrediction p = costs ? predict_cost(in, *costs) : predict_cost(in);
        d.predicted_speedup = p.speedup;
        d.predicted_routed_s = p.routed_s;
        d.predicted_blas_s = p.blas_s;
        if (d.predicted_speedup < kCostMargin) return forward(reason::cost_no_gain);
    }
    if (machine) return forward(machine);

    d.threads = threads;
    d.threads_note = note;
    d.route = route;
    d.reason = nullptr;
    return d;
}

namespace {

template <std::size_t P, std::size_t K>
struct ReasonList {
    ReasonEntry all[P + K];
    constexpr ReasonList(const ReasonEntry (&policy)[P], const ReasonEntry (&kernels)[K]) : all{} {
        for (std::size_t i = 0; i < P; ++i) all[i] = policy[i];
        for (std::size_t i = 0; i < K; ++i) all[P + i] = kernels[i];
    }
};
constexpr ReasonList kAllReasons(kPolicyReasons, kKernelReasons);

}  // namespace

const ReasonEntry* all_reasons(std::size_t* count) {
    *count = sizeof kAllReasons.all / sizeof kAllReasons.all[0];
    return kAllReasons.all;
}

}  // namespace amxblas

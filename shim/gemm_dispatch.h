// The path every intercepted GEMM takes, whatever its ABI: decide, check the numeric domain,
// run the emulation, or forward to the real BLAS, then log. The wrappers (gemm_fortran.cc,
// gemm_cblas.cc) convert their ABI into column-major GemmArgs and a forward() that calls the
// real routine with the caller's original arguments, untouched.
#pragma once

#include <atomic>
#include <chrono>
#include <type_traits>

#include "kernels/common/fp_environment.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/isa/backend.h"
#include "policy/route.h"
#include "shim/beta_scale.h"
#include "shim/blas_abi.h"
#include "shim/config.h"
#include "shim/domain_check.h"
#include "shim/hardware.h"
#include "shim/log.h"
#include "shim/openmp.h"
#include "shim/outlook.h"
#include "shim/record.h"
#include "shim/result_flags.h"
#include "shim/wisdom.h"

namespace amxblas {

// Routed calls running now in any application thread, and the threads they use: the
// policy gives a new call only the cores they leave free. A forked child starts from zero
// (shim/after_fork.cc): the parent's calls in flight ran on threads the child does not have.
inline std::atomic<int> g_routed_calls_running{0};
inline std::atomic<int> g_routed_threads_in_use{0};

// Holds a running call's share of the machine for as long as its emulation runs.
class RoutedCallShare {
public:
    explicit RoutedCallShare(int threads) : threads_(threads) {
        g_routed_calls_running.fetch_add(1, std::memory_order_relaxed);
        g_routed_threads_in_use.fetch_add(threads_, std::memory_order_relaxed);
    }
    ~RoutedCallShare() {
        g_routed_threads_in_use.fetch_sub(threads_, std::memory_order_relaxed);
        g_routed_calls_running.fetch_sub(1, std::memory_order_relaxed);
    }
    RoutedCallShare(const RoutedCallShare&) = delete;
    RoutedCallShare& operator=(const RoutedCallShare&) = delete;

private:
    int threads_;
};

// FP32 for sgemm and cgemm, FP64 for dgemm and zgemm.
template <typename T>
constexpr Precision precision_of() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, cfloat>) return Precision::fp32;
    else return Precision::fp64;
}

// The calls no rule could route (a size below AMXBLAS_MIN_N, a precision not routed) when
// nothing is logged or recorded: the wrappers forward them before they build the call's
// record, so that the decision costs a few compares (issue 45: at most 20 ns over the real
// BLAS's own 4 x 4 x 4 DGEMM; scripts/bench.sh --tiny). No floating-point environment is
// touched: ALPHA's comparison with zero is the same one the full path makes.
// settings() without its call and its static's guard on every call: the object it returns is
// built once and never moves.
inline std::atomic<const Settings*> g_settings_seen{nullptr};
inline const Settings& cached_settings() {
    const Settings* p = g_settings_seen.load(std::memory_order_acquire);
    if (!p) {
        p = &settings();
        g_settings_seen.store(p, std::memory_order_release);
    }
    return *p;
}

template <typename T>
inline bool forwarded_at_once(std::int64_t m, std::int64_t n, std::int64_t k, const T& alpha) {
    const Settings& s = cached_settings();
    return s.verbose == 0 && !(s.record_all && !s.record_dir.empty()) &&
           forwarded_whatever_else(precision_of<T>(), m, n, k, alpha == T(0), s);
}

// rec arrives with the caller's view of the call (layout, transposes, sizes) filled in; m, n
// and k are the column-major sizes as the caller passed them (args holds them as int, which
// is exact whenever the policy lets the call reach args: it forwards larger ones).
// Returns the flags a routed call's result owes its caller (shim/result_flags.h), for the entry
// point to raise once it has left the call (its re-entry guard released): a caller who traps
// them and leaves its handler by a longjmp then leaves the library in no call, its call logged
// and its threads given back.
template <typename T, typename Forward>
[[nodiscard]] unsigned dispatch_gemm(CallRecord rec, const kernels::GemmArgs<T>& args, std::int64_t m,
                   std::int64_t n, std::int64_t k, Forward&& forward) {
    using Clock = std::chrono::steady_clock;
    const Settings& s = settings();
    const bool timed = s.verbose > 0;
    if (timed) log_call_started();
    const Clock::time_point start = timed ? Clock::now() : Clock::time_point{};

    GemmCall call;
    call.precision = precision_of<T>();
    call.complex = std::is_same_v<T, cfloat> || std::is_same_v<T, cdouble>;
    call.transa = args.transa;
    call.transb = args.transb;
    call.m = m;
    call.n = n;
    call.k = k;
    call.lda = args.lda;
    call.ldb = args.ldb;
    call.ldc = args.ldc;
    call.alpha_is_zero = args.alpha == T(0);
    call.rounds_to_nearest = kernels::rounds_to_nearest(kernels::read_mxcsr());
    const CostTable* costs = nullptr;
    if (needs_thread_facts(call, s)) {
        call.in_parallel_region = in_openmp_parallel_region();
        call.concurrent_routed_calls = g_routed_calls_running.load(std::memory_order_relaxed);
        call.threads_in_use = g_routed_threads_in_use.load(std::memory_order_relaxed);
        // The model's constants, measured where this process's wisdom has them (shim/wisdom.h).
        if (s.shapes == ShapeRule::automatic) costs = &process_cost_table(rec.routine);
    }

    const Decision d = decide(call, s, hardware(), costs);
    record_on_entry(s, d, args);  // AMXBLAS_RECORD_ALL=1: before anything writes C
    const char* reason = d.reason;
    kernels::Fp64AutoReport report;
    unsigned owed_flags = 0;
    if (d.route == Route::beta_scale) {
        beta_scale(args);
    } else if (d.route != Route::forward) {
        const RoutedCallShare share(d.threads);
        {
            const kernels::LibraryFpEnvironment own_arithmetic;  // the caller's comes back after it
            reason = check_domain(args, d.threads);
            if (!reason) {
                kernels::RunOptions opt;
                opt.backend = d.backend;
                opt.fp64_engine = s.fp64_engine;
                opt.fp64_products = route_products(d.route, s);  // the INT8 route's moduli are the settings'
                opt.fp64_tol = s.fp64_tol;
                opt.fp64_report = &report;
                opt.threads = d.threads;
                opt.workspace_cap_bytes = s.workspace_cap_bytes;
                opt.amx_emulator = hardware().amx_emulator;
                reason = kernels::emulate_gemm(args, opt);
                if (!reason) owed_flags = result_flags(args, own_arithmetic.raised());
            }
        }
    }
    const bool forwarded = d.route == Route::forward || (d.route != Route::beta_scale && reason);
    if (forwarded) {
        // A failed emulation leaves C untouched: the real BLAS starts fresh, and the recorder
        // still sees C as on entry.
        record_if_uncertified(s, reason, args);
        forward();
    }

    if (s.verbose == 0) return owed_flags;
    const kernels::LibraryFpEnvironment own_arithmetic;  // the log's rates and times
    log_routing_outlook_once();
    if (costs) log_cost_model_note_once();
    rec.route = forwarded ? Route::forward : d.route;
    if (!forwarded && route_is_fp64(d.route)) {
        // The route names the engine that ran, and BF16's products: the summary counts calls per
        // engine and count. Under auto any engine may have run (in kernels/common/engines.def's
        // order, the first whose certificate passed); a fixed count ran the engine of its route.
        rec.fp64_auto = d.route == Route::amx_fp64_auto;
        const bool reported = rec.fp64_auto || !route_carries_count(d.route);
        rec.fp64_products = reported ? report.products : route_products(d.route);
        rec.route = reported ? fp64_route_ran(report.engine, report.products) : d.route;
        rec.fp64_margin = report.margin;
        rec.fp64_repaired = report.repaired;
    }
    rec.reason = reason;
    rec.backend = kernels::backend_name(d.backend);
    rec.threads = d.threads;
    rec.note = d.threads_note;
    rec.predicted_speedup = d.predicted_speedup;
    // The prediction of the path taken: the real BLAS's where the policy forwarded the call, the
    // routed call's where it ran; none where the kernels forwarded it (its time is both).
    if (d.predicted_speedup > 0)
        rec.predicted_s = d.route == Route::forward ? d.predicted_blas_s : forwarded ? 0 : d.predicted_routed_s;
    rec.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    log_call(rec);
    return owed_flags;
}

}  // namespace amxblas

#include "policy/route.h"

#include <algorithm>
#include <cctype>

namespace amxblas {

const char* route_name(Route r) {
    switch (r) {
        case Route::forward: return "forward";
        case Route::beta_scale: return "beta-scale";
        case Route::amx_fp32: return "amx-fp32";
        case Route::amx_fp64_6: return "amx-fp64-6";
        case Route::amx_fp64_10: return "amx-fp64-10";
        case Route::amx_fp64_15: return "amx-fp64-15";
        case Route::amx_fp64_21: return "amx-fp64-21";
    }
    return "forward";
}

Route fp64_route(int products) {
    switch (products) {
        case 6: return Route::amx_fp64_6;
        case 10: return Route::amx_fp64_10;
        case 15: return Route::amx_fp64_15;
        case 21: return Route::amx_fp64_21;
        default: return Route::forward;
    }
}

int route_products(Route r) {
    switch (r) {
        case Route::amx_fp32: return 6;
        case Route::amx_fp64_6: return 6;
        case Route::amx_fp64_10: return 10;
        case Route::amx_fp64_15: return 15;
        case Route::amx_fp64_21: return 21;
        case Route::forward:
        case Route::beta_scale: return 0;
    }
    return 0;
}

namespace {

bool is_trans_char(char t) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(t)));
    return u == 'N' || u == 'T' || u == 'C';
}
bool is_no_trans(char t) { return t == 'N' || t == 'n'; }

// Which backend the user asked for, if this machine can run it.
const char* pick_backend(BackendChoice choice, const Hardware& hw, kernels::Backend* out) {
    switch (choice) {
        case BackendChoice::automatic:
            // The emulator is a test harness: it is never chosen unless asked for by name.
            if (!hw.amx_cpu) return "backend:no-amx";
            *out = kernels::Backend::amx;
            return nullptr;
        case BackendChoice::amx:
            if (!hw.amx_cpu && !hw.amx_emulator) return "backend:no-amx";
            *out = kernels::Backend::amx;
            return nullptr;
        case BackendChoice::avx512:
            if (!hw.avx512_bf16) return "backend:no-avx512-bf16";
            *out = kernels::Backend::avx512;
            return nullptr;
        case BackendChoice::reference:
            *out = kernels::Backend::reference;
            return nullptr;
    }
    return "backend:no-amx";
}

}  // namespace

// The order of the checks is the reference BLAS's (sgemm.f / dgemm.f), so the parameter
// number matches what its xerbla would report.
int gemm_invalid_parameter(char transa, char transb, int m, int n, int k, int lda, int ldb,
                           int ldc) {
    const int nrowa = is_no_trans(transa) ? m : k;
    const int nrowb = is_no_trans(transb) ? k : n;
    if (!is_trans_char(transa)) return 1;
    if (!is_trans_char(transb)) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < std::max(1, nrowa)) return 8;
    if (ldb < std::max(1, nrowb)) return 10;
    if (ldc < std::max(1, m)) return 13;
    return 0;
}

Decision decide(const GemmCall& call, const Settings& settings, const Hardware& hw) {
    Decision d;
    auto forward = [&d](const char* reason) {
        d.route = Route::forward;
        d.reason = reason;
        return d;
    };

    // Invalid and empty calls: the real BLAS reports them (xerbla) or returns, exactly as the
    // user's code expects. K = 0 or ALPHA = 0 leaves C := BETA*C, which the shim does itself.
    if (gemm_invalid_parameter(call.transa, call.transb, call.m, call.n, call.k, call.lda,
                               call.ldb, call.ldc) != 0)
        return forward("args:invalid");
    if (call.m == 0 || call.n == 0) return forward("size:empty");
    if (call.k == 0 || call.alpha_is_zero) {
        d.route = Route::beta_scale;
        d.reason = call.k == 0 ? "size:k-zero" : "alpha:zero";
        return d;
    }

    Route route;
    if (call.precision == Precision::fp32) {
        if (!settings.fp32) return forward("fp32:disabled");
        route = Route::amx_fp32;
    } else {
        if (settings.fp64_products == 0) return forward("fp64:disabled");
        route = fp64_route(settings.fp64_products);
        if (route == Route::forward) return forward("fp64:disabled");
    }

    if (const char* why = pick_backend(settings.backend, hw, &d.backend)) return forward(why);

    if (settings.shapes == ShapeRule::square && !(call.m == call.n && call.n == call.k))
        return forward("shape:not-square");
    if (std::min({call.m, call.n, call.k}) < settings.min_n) return forward("size:below-min-n");

    // Never oversubscribe: inside an OpenMP region the application already uses the cores;
    // calls from several application threads share them.
    d.threads = std::max(1, settings.num_threads);
    if (call.in_parallel_region) {
        d.threads = 1;
        d.threads_note = "threads:in-parallel-region";
    } else if (call.concurrent_routed_calls > 0) {
        d.threads = std::max(1, d.threads / (call.concurrent_routed_calls + 1));
        d.threads_note = "threads:concurrent-calls";
    }
    d.route = route;
    d.reason = nullptr;
    return d;
}

}  // namespace amxblas

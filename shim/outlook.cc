#include "shim/outlook.h"

#include <cstdio>
#include <mutex>

#include "kernels/driver/emulated_gemm.h"
#include "policy/cost_model.h"
#include "shim/config.h"
#include "shim/hardware.h"
#include "shim/log.h"
#include "shim/wisdom.h"

namespace amxblas {

namespace {

// A call every rule of the configuration lets through, so that decide() answers only about
// the machine and the backend asked for.
GemmCall eligible_call(const Settings& s, Precision p) {
    GemmCall c;
    c.precision = p;
    c.transa = c.transb = 'N';
    c.m = c.n = c.k = c.lda = c.ldb = c.ldc = s.min_n > 0 ? s.min_n : 1;
    c.alpha_is_zero = false;
    return c;
}

// "AMXBLAS_FP64_PRODUCTS=6, 10, ... or auto" from the variant table.
std::string fp64_hint() {
    std::string s = "AMXBLAS_FP64_PRODUCTS=";
    for (int p : kernels::kFp64Products) s += std::to_string(p) + ", ";
    return s + "or auto";
}

// Under AMXBLAS_SHAPES=auto, the speedup the cost model predicts for the routed FP32 decision d
// on a 4096^3 SGEMM: the model's gain grows with every size (tests/policy/test_cost_model.cc), so
// a backend it forwards this call on routes no call of a usual size. 0 when it is not asked.
double large_call_gain(const Settings& s, const Decision& d, const CostTable* costs) {
    if (s.shapes != ShapeRule::automatic || d.route == Route::forward) return 0;
    GemmCall big = eligible_call(s, Precision::fp32);
    big.m = big.n = big.k = big.lda = big.ldb = big.ldc = 4096;
    const CostInput in = cost_input(big, d.route, s, d.backend, d.threads, costs);
    return (costs ? predict_cost(in, *costs) : predict_cost(in)).speedup;
}

}  // namespace

std::string routing_outlook(const Settings& s, const Hardware& hw, const CostTable* costs) {
    const bool fp32 = s.fp32;
    const bool fp64 = fp64_route(s.fp64_engine, s.fp64_products) != Route::forward;
    Settings both = s;
    both.fp32 = true;
    both.shapes = ShapeRule::any;  // the machine's answer, not the cost model's on a small call
    const Decision d = decide(eligible_call(both, Precision::fp32), both, hw);
    const char* machine = d.route == Route::forward ? d.reason : nullptr;
    const double gain = large_call_gain(s, d, costs);
    const bool model_none = !machine && s.shapes == ShapeRule::automatic && gain < kCostMargin;
    if (!machine && !model_none && (fp32 || fp64)) return "";
    if (model_none && (fp32 || fp64)) {
        char why[512];
        std::snprintf(why, sizeof why,
                      "note: no GEMM will be routed with these settings on this machine: AMXBLAS_SHAPES=auto "
                      "routes only calls the cost model predicts to gain, and on the %s backend it predicts "
                      "none (a 4096 x 4096 x 4096 SGEMM: %.2fx). To run the emulation anyway (to test it or "
                      "study its accuracy), set AMXBLAS_SHAPES=square or any (amxblas-run: --shapes)",
                      kernels::backend_name(d.backend), gain);
        return why;
    }

    std::string line = "note: no GEMM will be routed with these settings on this machine: ";
    if (machine) {
        const char* asked = s.backend == BackendChoice::automatic
                                ? "auto"
                                : kernels::backend_name(kernels::kAllBackends[static_cast<int>(s.backend) - 1]);
        line += std::string("AMXBLAS_BACKEND=") + asked +
                (s.backend == BackendChoice::automatic ? " uses only the amx backend," : " is set,") +
                " which this CPU cannot run (" + machine + ")";
        if (!fp32 && !fp64) line += ", and";
    }
    if (!fp32 && !fp64) line += " AMXBLAS_FP32=0 and AMXBLAS_FP64_PRODUCTS=0 route neither precision";
    line += ". To run the emulation anyway";
    if (machine) {
        line += " (to test it or study its accuracy; slower than the real BLAS without AMX), set";
        const char* sep = " ";
        for (kernels::Backend b : kernels::kAllBackends) {
            if (!hw.can_run(b)) continue;
            line += sep;
            line += std::string("AMXBLAS_BACKEND=") + kernels::backend_name(b);
            if (b == kernels::Backend::reference) line += " (portable, slow)";
            sep = " or ";
        }
        if (!fp64) line += std::string(fp32 ? "; DGEMM and ZGEMM also need " : "; and AMXBLAS_FP32=1 or ") + fp64_hint();
    } else {
        line += ", set AMXBLAS_FP32=1 or " + fp64_hint();
    }
    line += " (amxblas-run: --backend, --fp32, --fp64-products)";
    return line;
}

void log_routing_outlook_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        // The wisdom only where the model is used: no other setting reads (or warns about) it.
        const Settings& s = settings();
        const CostTable* costs = s.shapes == ShapeRule::automatic ? &process_cost_table(Routine::sgemm_) : nullptr;
        const std::string line = routing_outlook(s, hardware(), costs);
        if (!line.empty()) log_note(line.c_str());
    });
}

}  // namespace amxblas

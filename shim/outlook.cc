#include "shim/outlook.h"

#include <cstdio>
#include <mutex>

#include "kernels/isa/backend.h"
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

// The decision on a call every rule lets through, on backend choice `backend`: its route, or its
// machine reason when this machine cannot run that backend.
Decision machine_decision(const Settings& s, BackendChoice backend, const Hardware& hw) {
    Settings both = s;
    both.fp32 = true;
    both.shapes = ShapeRule::any;  // the machine's answer, not the cost model's on a small call
    both.backend = backend;
    return decide(eligible_call(both, Precision::fp32), both, hw);
}

// "AMXBLAS_BACKEND=name" of a backend choice.
std::string backend_setting(BackendChoice choice) {
    return std::string("AMXBLAS_BACKEND=") +
           (choice == BackendChoice::automatic
                ? "auto"
                : kernels::backend_name(kernels::kAllBackends[static_cast<int>(choice) - 1]));
}

// "AMXBLAS_BACKEND=avx512 or AMXBLAS_BACKEND=reference (portable, slow)": the backends this
// machine runs, fastest first (the table's order); the first of them in *first.
std::string runnable_backends(const Hardware& hw, BackendChoice* first) {
    std::string list;
    for (kernels::Backend b : kernels::kAllBackends) {
        if (!hw.can_run(b)) continue;
        const auto choice = static_cast<BackendChoice>(static_cast<int>(b) + 1);
        if (list.empty()) *first = choice;
        list += std::string(list.empty() ? "" : " or ") + backend_setting(choice);
        if (b == kernels::Backend::reference) list += " (portable, slow)";
    }
    return list;
}

}  // namespace

// One note names everything that stops routing here and every setting that would route: the
// backend, the shape rule (the cost model predicts no gain on the backends that run without
// AMX) and the precisions, so that doing what it says routes, without a second note.
std::string routing_outlook(const Settings& s, const Hardware& hw, const CostTable* costs) {
    const bool fp32 = s.fp32;
    const bool fp64 = fp64_route(s.fp64_engine, s.fp64_products) != Route::forward;
    const Decision d = machine_decision(s, s.backend, hw);
    const char* machine = d.route == Route::forward ? d.reason : nullptr;
    const double gain = large_call_gain(s, d, costs);
    const bool model_none = !machine && s.shapes == ShapeRule::automatic && gain < kCostMargin;
    if (!machine && !model_none && (fp32 || fp64)) return "";

    // The backends that would run, when the one asked for cannot; the shape rule is needed when
    // the first of them gains nothing under the model.
    std::string backends;
    bool shapes_needed = model_none;
    if (machine) {
        BackendChoice first = BackendChoice::automatic;
        backends = runnable_backends(hw, &first);
        if (s.shapes == ShapeRule::automatic)
            shapes_needed = large_call_gain(s, machine_decision(s, first, hw), nullptr) < kCostMargin;  // another backend: built in
    }

    std::string line = "note: no GEMM will be routed with these settings on this machine: ";
    std::string why;
    if (machine)
        why = backend_setting(s.backend) +
              (s.backend == BackendChoice::automatic ? " uses only the amx backend," : " is set,") +
              " which this CPU cannot run (" + machine + ")";
    if (model_none) {
        char text[256];
        std::snprintf(text, sizeof text,
                      "AMXBLAS_SHAPES=auto routes only calls the cost model predicts to gain, and on the %s "
                      "backend it predicts none (a 4096 x 4096 x 4096 SGEMM: %.2fx)",
                      kernels::backend_name(d.backend), gain);
        why = text;
    }
    if (!fp32 && !fp64)
        why += std::string(why.empty() ? "" : ", and ") + "AMXBLAS_FP32=0 and AMXBLAS_FP64_PRODUCTS=0 route neither precision";
    line += why + ". To run the emulation anyway (to test it or study its accuracy" +
            (machine ? "; slower than the real BLAS without AMX" : "") + "), set ";

    std::string settings, options;
    auto add = [&](const std::string& setting, const char* option) {
        settings += (settings.empty() ? "" : "; ") + setting;
        options += std::string(options.empty() ? "" : ", ") + option;
    };
    if (machine) add(backends, "--backend");
    if (shapes_needed)
        add(std::string("AMXBLAS_SHAPES=square or any") + (machine ? " (without AMX the cost model predicts no gain)" : ""),
            "--shapes");
    if (!fp32 && !fp64) add("AMXBLAS_FP32=1 or " + fp64_hint(), "--fp32, --fp64-products");
    line += settings;
    if (fp32 && !fp64) {
        line += "; DGEMM and ZGEMM also need " + fp64_hint();
        options += ", --fp64-products";
    }
    return line + " (amxblas-run: " + options + ")";
}

std::string backend_request_warning(const Settings& s, const Hardware& hw) {
    if (s.backend == BackendChoice::automatic) return "";
    const Decision d = machine_decision(s, s.backend, hw);
    if (d.route != Route::forward) return "";
    BackendChoice first = BackendChoice::automatic;
    return "warning: " + backend_setting(s.backend) + " asks for a backend this CPU cannot run (" + d.reason +
           "): no GEMM is routed; " + runnable_backends(hw, &first) + " runs here";
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

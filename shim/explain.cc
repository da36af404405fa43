// amxblas-explain: what AMXBLAS_SHAPES=auto would decide for one GEMM call, without running it
// (`amxblas-run --explain`). It reads the settings from the environment as the library does
// (shim/config.cc), asks the cost model (policy/cost_model.h) for AMX and for the backend at
// hand, and runs decide() for each: on AMX as if this machine had it, on the backend at hand
// on this machine as it is.
//   amxblas-explain ROUTINE M N K [TRANSA TRANSB] [BACKEND]
// ROUTINE: sgemm, dgemm, cgemm or zgemm (a trailing _ or _64_ and a cblas_ prefix are accepted).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/isa/backend.h"
#include "policy/cost_model.h"
#include "policy/reasons.h"
#include "policy/route.h"
#include "shim/config.h"
#include "shim/hardware.h"
#include "shim/real_blas.h"
#include "shim/wisdom.h"

using namespace amxblas;

namespace {

int usage(const char* why) {
    std::fprintf(stderr, "amxblas-explain: %s\nusage: amxblas-explain ROUTINE M N K [TRANSA TRANSB] [BACKEND]\n", why);
    return 2;
}

bool parse_size(const char* s, std::int64_t* out) {
    char* end = nullptr;
    const long long v = std::strtoll(s, &end, 10);
    if (!*s || *end || v < 0) return false;
    *out = v;
    return true;
}

// The backend a user of this machine has: the one asked for, else the first of the table
// this CPU runs (amx, avx512, reference).
kernels::Backend backend_at_hand(const Settings& s, const Hardware& hw) {
    if (s.backend != BackendChoice::automatic) return kernels::kAllBackends[static_cast<int>(s.backend) - 1];
    for (kernels::Backend b : kernels::kAllBackends)
        if (hw.can_run(b)) return b;
    return kernels::Backend::reference;
}

void print_row(kernels::Backend b, const GemmCall& call, const Settings& s, const Hardware& hw, Route route,
               int threads, const CostTable& costs, const char* where) {
    const CostPrediction p = predict_cost(cost_input(call, route, s, b, threads, &costs), costs);
    Settings auto_s = s;
    auto_s.shapes = ShapeRule::automatic;
    auto_s.backend = static_cast<BackendChoice>(static_cast<int>(b) + 1);
    const Decision d = decide(call, auto_s, hw, &costs);
    std::string decision = d.route == Route::forward ? std::string("forward (") + (d.reason ? d.reason : "?") + ")"
                                                     : std::string("route ") + route_name(d.route);
    std::printf("%-10s %9.3f %10.3f %12.3f %9.3f %9.3f %10.3f %10.3f %8.2fx  %s%s\n", kernels::backend_name(b),
                1e3 * p.scan_s, 1e3 * p.split_pack_s, 1e3 * p.products_s, 1e3 * p.reconstruct_s, 1e3 * p.overhead_s,
                1e3 * p.routed_s, 1e3 * p.blas_s, p.speedup, decision.c_str(), where);
}

// Each constant of backend b's model with its value and where it came from: measured (the
// wisdom file's entry) or built in (policy/cost_model.cc); the real BLAS's time for routine r.
void print_constants(kernels::Backend b, const CostSource& src, int r) {
    const bool any = src.table.measured != 0 || src.table.blas_measured[r];
    std::printf("constants of the %s model: ", kernels::backend_name(b));
    if (any) std::printf("measured in wisdom %s (%s), the others built in\n", src.file.c_str(), src.entry.c_str());
    else std::printf("built in (%s)\n", src.why.empty() ? "no entry" : src.why.c_str());
    for (int i = 0; i < kCostFieldCount; ++i) {
        const double v = src.table.phases.*kCostFields[i].member;
        const bool measured = src.table.measured >> i & 1;
        if (v == 0 && !measured) continue;  // a term this backend's model does not use
        std::printf("  %-26s %12.4g  %s\n", kCostFields[i].name, v, measured ? "measured" : "built in");
    }
    if (src.table.blas_measured[r]) {
        const BlasTimeModel& m = src.table.blas[r];
        std::printf("  %-26s %.3g s + (%s M N K / %.4g FLOP/s + %.3g s M N + %.3g s M K + %.3g s K N) / threads  measured\n",
                    (std::string("real BLAS ") + kBlasRoutineNames[r]).c_str(), m.fixed_s, r >= 2 ? "8" : "2", m.flops_s,
                    m.c_s, m.a_s, m.b_s);
    } else {
        std::printf("  %-26s %s  built in\n", (std::string("real BLAS ") + kBlasRoutineNames[r]).c_str(),
                    r % 2 ? "blas_flops_s_fp64 (above)" : "blas_flops_s_fp32 (above)");
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) return usage("expected ROUTINE M N K");
    std::string r = argv[1];
    if (r.rfind("cblas_", 0) == 0) r = r.substr(6);
    while (!r.empty() && (r.back() == '_' || r.back() == '4' || r.back() == '6')) r.pop_back();
    if (r != "sgemm" && r != "dgemm" && r != "cgemm" && r != "zgemm")
        return usage(("unknown routine '" + std::string(argv[1]) + "' (sgemm, dgemm, cgemm, zgemm)").c_str());
    GemmCall call{};
    call.precision = (r[0] == 's' || r[0] == 'c') ? Precision::fp32 : Precision::fp64;
    call.complex = r[0] == 'c' || r[0] == 'z';
    if (!parse_size(argv[2], &call.m) || !parse_size(argv[3], &call.n) || !parse_size(argv[4], &call.k))
        return usage("M, N and K must be integers >= 0");
    call.transa = argc > 5 ? argv[5][0] : 'N';
    call.transb = argc > 6 ? argv[6][0] : 'N';
    auto no_trans = [](char t) { return t == 'N' || t == 'n'; };
    call.lda = std::max<std::int64_t>(1, no_trans(call.transa) ? call.m : call.k);
    call.ldb = std::max<std::int64_t>(1, no_trans(call.transb) ? call.k : call.n);
    call.ldc = std::max<std::int64_t>(1, call.m);

    Settings s = settings();
    say_configuration_warnings();  // the run's settings, with what is wrong in them
    if (argc > 7) {
        kernels::Backend b;
        if (!kernels::parse_backend(argv[7], &b)) return usage("unknown backend");
        s.backend = static_cast<BackendChoice>(static_cast<int>(b) + 1);
    }
    // FP64 routing is off by default: explain the route a user would turn on to DGEMM's accuracy.
    const bool fp64_off =
        call.precision == Precision::fp64 && fp64_route(s.fp64_engine, s.fp64_products) == Route::forward;
    if (fp64_off) {
        s.fp64_engine = kernels::Fp64Engine::bf16;
        s.fp64_products = 21;
    }
    const Route route =
        call.precision == Precision::fp32 ? Route::amx_fp32 : fp64_route(s.fp64_engine, s.fp64_products);
    const Hardware& hw = hardware();
    Hardware amx_hw = hw;
    amx_hw.set_runs(kernels::Backend::amx, true);
    const int threads = std::max(1, std::min(s.num_threads, hw.cores));
    // Each backend's constants as a program of this routine would have them: measured where the
    // wisdom has an entry for this machine, that backend and the BLAS a program without one of
    // its own gets (AMXBLAS_FALLBACK, else the default list: shim/real_blas.h).
    const Routine routine = call.complex ? (call.precision == Precision::fp32 ? Routine::cgemm_ : Routine::zgemm_)
                                         : (call.precision == Precision::fp32 ? Routine::sgemm_ : Routine::dgemm_);
    const kernels::Backend here = backend_at_hand(s, hw);
    const CostSource amx_costs =
        find_cost_source(s, kernels::Backend::amx, threads, real_symbol(routine), here == kernels::Backend::amx);
    const CostSource here_costs = find_cost_source(s, here, threads, real_symbol(routine), here != kernels::Backend::amx);

    // An engine's route (fp64-int8) does not say its count: the line adds it.
    const std::string route_text =
        route_carries_count(route)
            ? route_name(route)
            : std::string(route_name(route)) + " (" + std::to_string(s.fp64_products) + " " +
                  kernels::fp64_engine_row(route_engine(route)).unit + ")";
    std::printf("%s M=%lld N=%lld K=%lld transa=%c transb=%c: route %s, %d threads, routed where predicted >= %.2fx\n",
                r.c_str(), static_cast<long long>(call.m), static_cast<long long>(call.n),
                static_cast<long long>(call.k), call.transa, call.transb, route_text.c_str(), threads, kCostMargin);
    if (fp64_off)
        std::printf("note: AMXBLAS_FP64_PRODUCTS=0 here, so the library forwards DGEMM and ZGEMM (fp64:disabled);\n"
                    "      shown for AMXBLAS_FP64_PRODUCTS=21 (set it, or --fp64-products, to see another)\n");
    if (s.shapes != ShapeRule::automatic)
        std::printf("note: AMXBLAS_SHAPES is not auto here: the library would not consult the model; shown as under auto\n");
    std::printf("%-10s %9s %10s %12s %9s %9s %10s %10s %9s  %s\n", "backend", "scan_ms", "sp+pk_ms", "products_ms",
                "recon_ms", "ovhd_ms", "routed_ms", "blas_ms", "predicted", "decision under auto");
    print_row(kernels::Backend::amx, call, s, amx_hw, route, threads, amx_costs.table,
              hw.can_run(kernels::Backend::amx) ? "" : "  (as on a CPU with AMX and these cores)");
    if (here != kernels::Backend::amx) print_row(here, call, s, hw, route, threads, here_costs.table, "  (this machine)");
    if (here != kernels::Backend::amx) print_constants(kernels::Backend::amx, amx_costs, blas_routine_index(call.precision, call.complex));
    print_constants(here, here_costs, blas_routine_index(call.precision, call.complex));
    std::printf("built-in constants and their sources: policy/cost_model.cc; the model and its wisdom: docs/cost-model.md\n");
    return 0;
}

// The cost model's predictions before and after calibration (issue 45; scripts/bench.sh --model
// --blas LIB --wisdom FILE): a sweep of shapes (square, tall-skinny, short-wide, deep K, small
// K, small; each as SGEMM, DGEMM, CGEMM and ZGEMM), the routed call as the shim runs it (the
// domain check, then the kernels; DGEMM and ZGEMM on the route the settings name, by default
// AMXBLAS_FP64_PRODUCTS=auto under the auto engine) and the real BLAS (opened with dlopen),
// alternated in rounds, medians; beside them the model's predictions with the built-in
// constants and with the wisdom file's entry for this machine, backend, threads and BLAS.
//   amxblas_model_sweep --blas LIB --wisdom FILE [--backend B] [--threads T] [--reps R]
//                       [--routines "sgemm dgemm cgemm zgemm"] [--shapes "MxNxK ..."]
//                       [--fp64 auto|bf16-P|bf16-auto|int8-C|int8-auto]
// Prints one row per routine and shape and, per backend, how many predictions are within 25%.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/isa/backend.h"
#include "scripts/calibrate/blas_library.h"
#include "scripts/calibrate/routed_call.h"
#include "shim/config.h"
#include "shim/hardware.h"
#include "shim/wisdom.h"
#include "bench/real_blas_threads.h"
#include "bench/sweep_shapes.h"

using namespace amxblas;
using namespace amxblas::calibrate;

namespace {

    // small, odd


struct Case {
    int routine, m, n, k;
    std::vector<double> routed, blas;
    std::vector<int> int8_runs;  // 1 where FP64 auto ran the INT8 engine
    const char* forwarded = nullptr;
};

int usage(const char* why) {
    std::fprintf(stderr, "amxblas_model_sweep: %s\n", why);
    return 2;
}

bool parse_fp64(const std::string& s, Fp64Route* r, Settings* settings) {
    if (s == "auto") {
        *r = {kernels::Fp64Engine::automatic, kernels::kFp64Auto};
        settings->fp64_engine = kernels::Fp64Engine::automatic;
        settings->fp64_products = kernels::kFp64Auto;
        return true;
    }
    const bool int8 = s.rfind("int8-", 0) == 0, bf16 = s.rfind("bf16-", 0) == 0;
    if (!int8 && !bf16) return false;
    const int count = s.substr(5) == "auto" ? kernels::kFp64Auto : std::atoi(s.c_str() + 5);
    *r = {int8 ? kernels::Fp64Engine::int8 : kernels::Fp64Engine::bf16, count};
    settings->fp64_engine = r->engine;
    settings->fp64_products = count;
    return count > 0 || count == kernels::kFp64Auto;
}

}  // namespace

int main(int argc, char** argv) {
    std::string blas_name, wisdom, routines = "sgemm dgemm cgemm zgemm", shapes = bench::kSweepShapes, fp64 = "auto";
    kernels::Backend backend = kernels::Backend::reference;
    bool backend_given = false;
    // The routed calls' threads as the library takes them (AMXBLAS_NUM_THREADS, OMP_NUM_THREADS, cores).
    int threads = std::max(1, std::min(settings().num_threads, hardware().cores)), reps = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
        const std::string v = argv[++i];
        if (a == "--blas") blas_name = v;
        else if (a == "--wisdom") wisdom = v;
        else if (a == "--backend") backend_given = kernels::parse_backend(v.c_str(), &backend);
        else if (a == "--threads") threads = std::max(1, std::atoi(v.c_str()));
        else if (a == "--reps") reps = std::max(1, std::atoi(v.c_str()));
        else if (a == "--routines") routines = v;
        else if (a == "--shapes") shapes = v;
        else if (a == "--fp64") fp64 = v;
        else return usage(("unknown option " + a).c_str());
    }
    if (blas_name.empty() || wisdom.empty() || !backend_given) return usage("--blas, --wisdom and --backend are needed");
    if (!hardware().can_run(backend)) {
        std::printf("backend %s cannot run here: sweep skipped\n", kernels::backend_name(backend));
        return 0;
    }
    BlasLibrary lib;
    std::string why;
    if (!lib.open(blas_name, &why)) return usage((blas_name + ": " + why).c_str());
    lib.set_threads(threads);
    Settings settings;
    settings.shapes = ShapeRule::automatic;
    settings.min_n = 1;
    settings.num_threads = threads;
    settings.wisdom = wisdom;
    Fp64Route route;
    if (!parse_fp64(fp64, &route, &settings)) return usage("--fp64: auto, bf16-P, bf16-auto, int8-C or int8-auto");

    std::vector<Case> cases;
    std::istringstream rs(routines);
    std::vector<int> routine_list;
    for (std::string w; rs >> w;)
        for (int r = 0; r < kBlasRoutineCount; ++r)
            if (w == kBlasRoutineNames[r]) routine_list.push_back(r);
    std::istringstream ss(shapes);
    for (std::string w; ss >> w;) {
        int m, n, k;
        if (std::sscanf(w.c_str(), "%dx%dx%d", &m, &n, &k) != 3) return usage(("bad shape " + w).c_str());
        for (int r : routine_list) cases.push_back({r, m, n, k, {}, {}, {}, nullptr});
    }
    // Rounds over the sweep, round 0 the warm-up; in each, the routed call and the real BLAS's
    // alternate which goes first.
    const bool blas_threads_never_spin = bench::real_blas_threads_never_spin();
    ShapeOperands ops;
    for (int round = 0; round <= reps; ++round)
        for (Case& c : cases) {
            double routed = 0, blas = 0;
            RoutedRun run;
            auto routed_call = [&] {
                if (!blas_threads_never_spin) bench::wait_for_real_blas_threads_to_sleep();
                run = ops.run(c.routine, c.m, c.n, c.k, backend, threads, route);
                routed = run.seconds;
            };
            auto blas_call = [&] { blas = lib.time_call(c.routine, c.m, c.n, c.k); };
            if (round % 2) routed_call(), blas_call();
            else blas_call(), routed_call();
            if (run.forwarded) c.forwarded = run.forwarded;
            if (round == 0) continue;
            c.routed.push_back(routed);
            c.blas.push_back(blas);
            c.int8_runs.push_back(run.report.engine == kernels::Fp64Engine::int8 && c.routine % 2 == 1);
        }

    const CostTable builtin = builtin_cost_table(backend);
    std::printf("== Cost model before and after calibration: backend %s, %d threads, real BLAS %s, FP64 %s; "
                "medians of %d alternated rounds after a warm-up ==\n",
                kernels::backend_name(backend), threads, blas_name.c_str(), fp64.c_str(), reps);
    std::printf("%-8s %-16s %10s %8s %8s %10s %8s %8s  %s\n", "routine", "MxNxK", "routed_ms", "err_bi%", "err_cal%",
                "blas_ms", "err_bi%", "err_cal%", "notes");
    int rows = 0, routed_bi = 0, routed_cal = 0, blas_bi = 0, blas_cal = 0;
    std::string source;
    for (const Case& c : cases) {
        const CostSource cal = find_cost_source(settings, backend, threads, lib.symbol(c.routine), false);
        if (source.empty()) source = cal.entry.empty() ? "no entry: " + cal.why : cal.file + ", " + cal.entry;
        GemmCall call{};
        call.precision = c.routine % 2 ? Precision::fp64 : Precision::fp32;
        call.complex = c.routine >= 2;
        call.transa = call.transb = 'N';
        call.m = c.m, call.n = c.n, call.k = c.k;
        const Route r = call.precision == Precision::fp32 ? Route::amx_fp32 : fp64_route(settings.fp64_engine, settings.fp64_products);
        const CostPrediction pb = predict_cost(cost_input(call, r, settings, backend, threads), builtin);
        const CostPrediction pc = predict_cost(cost_input(call, r, settings, backend, threads, &cal.table), cal.table);
        const double routed = bench::median_of_rounds(c.routed), blas = bench::median_of_rounds(c.blas);
        const double e[4] = {pb.routed_s / routed - 1, pc.routed_s / routed - 1, pb.blas_s / blas - 1, pc.blas_s / blas - 1};
        ++rows;
        routed_bi += std::fabs(e[0]) <= 0.25, routed_cal += std::fabs(e[1]) <= 0.25;
        blas_bi += std::fabs(e[2]) <= 0.25, blas_cal += std::fabs(e[3]) <= 0.25;
        int int8 = 0;
        for (int x : c.int8_runs) int8 += x;
        char shape[32], notes[96] = "";
        std::snprintf(shape, sizeof shape, "%dx%dx%d", c.m, c.n, c.k);
        if (c.forwarded) std::snprintf(notes, sizeof notes, "forwarded: %s", c.forwarded);
        else if (int8) std::snprintf(notes, sizeof notes, "INT8 ran %d of %zu", int8, c.int8_runs.size());
        std::printf("%-8s %-16s %10.3f %+8.1f %+8.1f %10.3f %+8.1f %+8.1f  %s\n", kBlasRoutineNames[c.routine], shape,
                    1e3 * routed, 100 * e[0], 100 * e[1], 1e3 * blas, 100 * e[2], 100 * e[3], notes);
    }
    std::printf("constants: %s\n", source.c_str());
    std::printf("within 25%%: routed call %d of %d built in, %d of %d calibrated; real BLAS %d of %d built in, "
                "%d of %d calibrated\n",
                routed_bi, rows, routed_cal, rows, blas_bi, rows, blas_cal, rows);
    return 0;
}

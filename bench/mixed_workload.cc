// The right decision on a mixed workload (issue 45; scripts/bench.sh --mixed): the captured DFT
// calls (.gemm files, --dft-dir) and the cost model's sweep (bench/model_sweep.cc's shapes
// as SGEMM, DGEMM, CGEMM, ZGEMM), each call timed forwarded (the real BLAS, opened with dlopen)
// and routed (as the shim runs it, AMXBLAS_FP64_PRODUCTS=auto under the default engine; a call
// the kernels decline is then forwarded, and its time is both), alternated in rounds, medians.
// The decisions are decide()'s under the default settings with FP64 on, AMXBLAS_MIN_N=1 (so that
// the model alone decides) and the backend given, once with the built-in constants and once with
// the wisdom file's entry. Per routine and shape class: the total time of forwarding all, routing
// all, and of each model's choice, against the better of the first two (target: the calibrated
// model's total at most 1.05x it).
//   amxblas_mixed_workload --blas LIB --wisdom FILE --backend B [--dft-dir DIR] [--shapes "..."]
//                          [--reps R] [--threads T]
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/isa/backend.h"
#include "scripts/calibrate/blas_library.h"
#include "scripts/calibrate/routed_call.h"
#include "scripts/replay/gemm_file.h"
#include "shim/config.h"
#include "shim/hardware.h"
#include "shim/wisdom.h"
#include "bench/real_blas_threads.h"
#include "bench/sweep_shapes.h"

using namespace amxblas;
using namespace amxblas::calibrate;

namespace {



// The shape classes of the table, by the call's proportions.
std::string shape_class(int m, int n, int k) {
    if (double(m) * n * k <= 262144.0 || std::max({m, n, k}) <= 64) return "small";
    if (k >= 4 * std::max(m, n)) return "deep-K";
    if (4 * k <= std::min(m, n)) return "small-K";
    if (m >= 4 * n) return "tall-skinny";
    if (n >= 4 * m) return "short-wide";
    return "square";
}

struct Call {
    int routine;
    std::string cls;
    replay::GemmFile file;  // the DFT calls' operands (empty for the sweep's)
    int m, n, k;
    std::vector<double> forward, route;
    bool declined = false;  // the kernels forwarded it (its routed time includes the real BLAS's)
};

std::vector<std::string> gemm_files(const std::string& dir) {
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (const dirent* e = readdir(d)) {
            const std::string name = e->d_name;
            if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gemm") == 0) files.push_back(dir + "/" + name);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    return files;
}

// The DFT call, forwarded: the real BLAS on a copy of C.
double forward_file(BlasLibrary& lib, const Call& c) {
    const replay::GemmFile& g = c.file;
    std::vector<double> out = g.c;
    return lib.time_gemm(c.routine, g.transa, g.transb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda, g.b.data(), g.ldb,
                         g.beta, out.data(), g.ldc);
}

// The DFT call, routed as the shim runs it, on a copy of C.
RoutedRun route_file(const Call& c, kernels::Backend b, int threads, Fp64Route fp64) {
    const replay::GemmFile& g = c.file;
    std::vector<double> out = g.c;
    if (!g.complex) {
        const kernels::GemmArgs<double> args{g.transa, g.transb, g.m, g.n, g.k, g.alpha[0], g.a.data(), g.lda,
                                             g.b.data(), g.ldb, g.beta[0], out.data(), g.ldc};
        return run_routed(args, b, threads, fp64);
    }
    using Z = std::complex<double>;
    const kernels::GemmArgs<Z> args{g.transa, g.transb, g.m, g.n, g.k, Z(g.alpha[0], g.alpha[1]),
                                    reinterpret_cast<const Z*>(g.a.data()), g.lda, reinterpret_cast<const Z*>(g.b.data()),
                                    g.ldb, Z(g.beta[0], g.beta[1]), reinterpret_cast<Z*>(out.data()), g.ldc};
    return run_routed(args, b, threads, fp64);
}

struct Totals {
    int calls = 0, declined = 0, routed_builtin = 0, routed_calibrated = 0;
    double forward = 0, route = 0, builtin = 0, calibrated = 0;
};

}  // namespace

int main(int argc, char** argv) {
    std::string blas_name, wisdom, dft_dir, shapes = bench::kSweepShapes;
    kernels::Backend backend = kernels::Backend::reference;
    bool backend_given = false;
    // The routed calls' threads as the library takes them (AMXBLAS_NUM_THREADS, OMP_NUM_THREADS, cores).
    int threads = std::max(1, std::min(settings().num_threads, hardware().cores)), reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--blas") blas_name = v;
        else if (a == "--wisdom") wisdom = v;
        else if (a == "--backend") backend_given = kernels::parse_backend(v.c_str(), &backend);
        else if (a == "--dft-dir") dft_dir = v;
        else if (a == "--shapes") shapes = v;
        else if (a == "--reps") reps = std::max(1, std::atoi(v.c_str()));
        else if (a == "--threads") threads = std::max(1, std::atoi(v.c_str()));
        else return std::fprintf(stderr, "amxblas_mixed_workload: unknown option %s\n", a.c_str()), 2;
    }
    if (blas_name.empty() || wisdom.empty() || !backend_given)
        return std::fprintf(stderr, "amxblas_mixed_workload: --blas, --wisdom and --backend are needed\n"), 2;
    if (!hardware().can_run(backend)) {
        std::printf("backend %s cannot run here: mixed workload skipped\n", kernels::backend_name(backend));
        return 0;
    }
    BlasLibrary lib;
    std::string why;
    if (!lib.open(blas_name, &why)) return std::fprintf(stderr, "amxblas_mixed_workload: %s: %s\n", blas_name.c_str(), why.c_str()), 1;
    lib.set_threads(threads);

    // The default settings with FP64 on and the size rule off: the model alone decides.
    Settings s;
    s.fp64_engine = kernels::Fp64Engine::automatic;
    s.fp64_products = kernels::kFp64Auto;
    s.min_n = 1;
    s.shapes = ShapeRule::automatic;
    s.backend = static_cast<BackendChoice>(static_cast<int>(backend) + 1);
    s.num_threads = threads;
    s.wisdom = wisdom;
    const Fp64Route fp64{kernels::Fp64Engine::automatic, kernels::kFp64Auto};

    std::vector<Call> calls;
    for (const std::string& path : dft_dir.empty() ? std::vector<std::string>{} : gemm_files(dft_dir)) {
        Call c{};
        if (!replay::read_gemm_file(path.c_str(), &c.file, &why) || c.file.single) continue;
        c.routine = c.file.complex ? 3 : 1;
        c.m = c.file.m, c.n = c.file.n, c.k = c.file.k;
        c.cls = "dft:" + shape_class(c.m, c.n, c.k);
        calls.push_back(std::move(c));
    }
    std::istringstream ss(shapes);
    for (std::string w; ss >> w;) {
        int m, n, k;
        if (std::sscanf(w.c_str(), "%dx%dx%d", &m, &n, &k) != 3) continue;
        for (int r = 0; r < kBlasRoutineCount; ++r) {
            Call c{};
            c.routine = r, c.m = m, c.n = n, c.k = k;
            c.cls = shape_class(m, n, k);
            calls.push_back(std::move(c));
        }
    }
    const bool blas_threads_never_spin = bench::real_blas_threads_never_spin();
    ShapeOperands ops;
    for (int round = 0; round <= reps; ++round)
        for (Call& c : calls) {
            double fwd = 0, rt = 0;
            auto forward = [&] { fwd = c.file.m ? forward_file(lib, c) : lib.time_call(c.routine, c.m, c.n, c.k); };
            auto route = [&] {
                if (!blas_threads_never_spin) bench::wait_for_real_blas_threads_to_sleep();
                const RoutedRun r = c.file.m ? route_file(c, backend, threads, fp64)
                                             : ops.run(c.routine, c.m, c.n, c.k, backend, threads, fp64);
                rt = r.seconds;
                // Declined: the shim then forwards it, so its time is both.
                if (r.forwarded) {
                    c.declined = true;
                    rt += c.file.m ? forward_file(lib, c) : lib.time_call(c.routine, c.m, c.n, c.k);
                }
            };
            if (round % 2) forward(), route();
            else route(), forward();
            if (round == 0) continue;
            c.forward.push_back(fwd);
            c.route.push_back(rt);
        }

    std::map<std::string, Totals> table;
    std::vector<std::string> wrong_way;
    const CostTable builtin = builtin_cost_table(backend);
    std::string source;
    const Hardware& hw = hardware();
    for (const Call& c : calls) {
        const CostSource cal = find_cost_source(s, backend, threads, lib.symbol(c.routine), false);
        if (source.empty()) source = cal.entry.empty() ? "no entry: " + cal.why : cal.file + ", " + cal.entry;
        GemmCall call{};
        call.precision = c.routine % 2 ? Precision::fp64 : Precision::fp32;
        call.complex = c.routine >= 2;
        call.transa = c.file.m ? c.file.transa : 'N';
        call.transb = c.file.m ? c.file.transb : 'N';
        call.m = c.m, call.n = c.n, call.k = c.k;
        call.lda = c.file.m ? c.file.lda : c.m;
        call.ldb = c.file.m ? c.file.ldb : c.k;
        call.ldc = c.file.m ? c.file.ldc : c.m;
        call.alpha_is_zero = c.file.m && c.file.alpha[0] == 0 && c.file.alpha[1] == 0;
        const bool by_builtin = decide(call, s, hw, &builtin).route != Route::forward;
        const Decision by_wisdom = decide(call, s, hw, &cal.table);
        const bool by_calibrated = by_wisdom.route != Route::forward;
        const double fwd = bench::median_of_rounds(c.forward), rt = bench::median_of_rounds(c.route);
        // The calls the calibrated model sent the slower way by more than 5%, listed after the
        // table: where its misses come from.
        if (by_calibrated ? rt > 1.05 * fwd : fwd > 1.05 * rt) {
            char line[160];
            std::snprintf(line, sizeof line, "%-8s %-22s %5dx%dx%d  %s  predicted %.2fx, measured %.2fx (%.3f against %.3f ms)",
                          kBlasRoutineNames[c.routine], c.cls.c_str(), c.m, c.n, c.k, by_calibrated ? "routed   " : "forwarded",
                          by_wisdom.predicted_speedup, fwd / rt, 1e3 * (by_calibrated ? rt : fwd),
                          1e3 * (by_calibrated ? fwd : rt));
            wrong_way.push_back(line);
        }
        Totals& t = table[std::string(kBlasRoutineNames[c.routine]) + " " + c.cls];
        ++t.calls;
        t.declined += c.declined;
        t.forward += fwd, t.route += rt;
        t.builtin += by_builtin ? rt : fwd;
        t.calibrated += by_calibrated ? rt : fwd;
        t.routed_builtin += by_builtin, t.routed_calibrated += by_calibrated;
    }
    std::printf("== Mixed workload: backend %s, %d threads, real BLAS %s; %zu calls (%s), medians of %d alternated rounds "
                "after a warm-up ==\n",
                kernels::backend_name(backend), threads, blas_name.c_str(), calls.size(),
                dft_dir.empty() ? "the sweep" : "the DFT calls and the sweep", reps);
    std::printf("%-24s %5s %12s %12s %16s %16s %8s %8s  %s\n", "routine class", "calls", "forward_ms", "route_ms",
                "built-in_ms (r)", "calibrated_ms (r)", "bi/best", "cal/best", "target cal <= 1.05x best");
    int rows = 0, met = 0;
    for (const auto& [name, t] : table) {
        const double best = std::min(t.forward, t.route);
        const bool ok = t.calibrated <= 1.05 * best;
        ++rows, met += ok;
        char bi[40], ca[40];
        std::snprintf(bi, sizeof bi, "%.3f (%d)", 1e3 * t.builtin, t.routed_builtin);
        std::snprintf(ca, sizeof ca, "%.3f (%d)", 1e3 * t.calibrated, t.routed_calibrated);
        std::printf("%-24s %5d %12.3f %12.3f %16s %16s %8.3f %8.3f  %s%s\n", name.c_str(), t.calls, 1e3 * t.forward,
                    1e3 * t.route, bi, ca, t.builtin / best, t.calibrated / best, ok ? "PASS" : "MISS",
                    t.declined ? (" (" + std::to_string(t.declined) + " declined by the kernels)").c_str() : "");
    }
    std::printf("(r): calls the model routes. constants: %s\n", source.c_str());
    std::printf("calls the calibrated model sent the slower way by more than 5%%: %zu%s\n", wrong_way.size(),
                wrong_way.empty() ? "" : " (the time taken against the other way's)");
    for (const std::string& line : wrong_way) std::printf("  %s\n", line.c_str());
    std::printf("%d of %d routine and shape classes within 1.05x of the better of forwarding all and routing all\n", met, rows);
    return 0;
}

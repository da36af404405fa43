// The cost model (policy/cost_model.h) against measured times, for the backend at hand
// (scripts/bench.sh --model): per shape and route, the routed call (the FP32 domain scan, then
// the emulation, as the shim runs them) and OpenBLAS, alternated, medians of --reps rounds over
// the whole sweep after a warm-up round; the model's prediction for the same threads beside them.
//   amxblas_model_check [--backend B] [--threads T] [--reps R] [--routes "fp32 fp64_6"]
//                       [--shapes "MxNxK ..."] [--calibrate]
// Routes: fp32, fp64_P (the BF16 engine, P products) and int8_C (the INT8 engine, C moduli).
// --calibrate also prints the per-core rates each measurement implies (the constants of
// policy/cost_model.cc), phase by phase from kernels::PhaseTimes, and their medians. The INT8
// engine does not time its reconstruction apart from its products: each int8 row also runs the
// call with products that do no arithmetic (bench/no_arith_kernels.h), whose compute time
// is the reconstruction's, and the products' is the difference. Its calls of several K chunks
// give the folds' rate (the row's reconstruction rate taken for the last chunk's part).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/int8/crt_basis.h"
#include "kernels/isa/backend.h"
#include "kernels/scan/operand_scan.h"
#include "policy/cost_model.h"
#include "bench/no_arith_kernels.h"
#include "bench/real_blas_threads.h"
#include "tests/common/rng.h"

namespace {

using namespace amxblas;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? NAN : v[v.size() / 2];
}

struct Shape {
    int m, n, k;
};

// The sweep's default: square, tall-skinny, short-wide, small K and large K (>= 20 shapes),
// small enough for the scalar reference backend.
const char* kDefaultShapes =
    "128x128x128 192x192x192 256x256x256 320x320x320 384x384x384 512x512x512 "
    "1024x128x128 2048x64x256 128x1024x128 64x2048x256 "
    "512x512x32 512x512x64 768x768x32 1024x1024x16 "
    "128x128x1024 64x64x4096 256x256x1024 96x96x2048 "
    "300x200x100 100x300x500 640x96x384 96x640x384";

// One shape and route: its operands, and the times of each round.
struct Measured {
    double routed_s, blas_s;
    kernels::PhaseTimes phases;  // of the median routed run
    double scan_s;
};

// One shape and route: its operands, and the times of each round.
struct Case {
    Shape s;
    std::string route;
    bool fp64;
    bool int8;     // the INT8 engine (fp64 too)
    bool untiled;  // int8 with --calibrate: time the call without products too
    int products;
    const kernels::Variant* v;
    std::vector<float> af, bf, cf;
    std::vector<double> ad, bd, cd;
    std::vector<double> routed, blas, scans;
    std::vector<kernels::PhaseTimes> phases;
    std::vector<double> untiled_compute;  // int8 with --calibrate: compute_s without products
};

template <typename T>
void run_once(Case& c, const std::vector<T>& a, const std::vector<T>& b, std::vector<T>& out, kernels::Backend backend,
              int threads, bool record) {
    const Shape& s = c.s;
    kernels::GemmArgs<T> g{'N', 'N', s.m, s.n, s.k, T(1), a.data(), s.m, b.data(), s.k, T(0), out.data(), s.m};
    kernels::RunOptions opt;
    opt.backend = backend;
    opt.threads = threads;
    opt.fp64_products = c.products;
    if (c.int8) opt.fp64_engine = kernels::Fp64Engine::int8;
    kernels::PhaseTimes pt;
    opt.times = &pt;
    bench::wait_for_real_blas_threads_to_sleep();
    double t0 = now_s();
    if constexpr (std::is_same_v<T, float>) kernels::scan_gemm_operands(g, threads);
    const double t_scan = now_s() - t0;
    const char* why = kernels::emulate_gemm(g, opt);
    const double t_routed = now_s() - t0;
    if (why) std::fprintf(stderr, "amxblas_model_check: %dx%dx%d forwarded: %s\n", s.m, s.n, s.k, why);
    t0 = now_s();
    if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, a.data(), s.m, b.data(), s.k, 0.f,
                    out.data(), s.m);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, a.data(), s.m, b.data(), s.k, 0.0,
                    out.data(), s.m);
    const double t_blas = now_s() - t0;
    if (c.int8 && c.untiled) {  // the same call without products: its compute is the reconstruction
        kernels::RunOptions u = opt;
        kernels::PhaseTimes ut;
        u.backend = kernels::Backend::reference;  // the no-arithmetic set stands in for its kernels
        u.microkernels = &bench::no_arith_kernels();
        u.times = &ut;
        bench::wait_for_real_blas_threads_to_sleep();
        if (!kernels::emulate_gemm(g, u) && record) c.untiled_compute.push_back(ut.compute_s);
    }
    if (!record) return;
    c.routed.push_back(t_routed);
    c.blas.push_back(t_blas);
    c.scans.push_back(t_scan);
    c.phases.push_back(pt);
}

void run_once(Case& c, kernels::Backend backend, int threads, bool record) {
    if (c.fp64) run_once(c, c.ad, c.bd, c.cd, backend, threads, record);
    else run_once(c, c.af, c.bf, c.cf, backend, threads, record);
}

}  // namespace

int main(int argc, char** argv) {
    kernels::Backend backend = kernels::Backend::reference;
    int threads = 2, reps = 3;
    bool calibrate = false;
    std::string routes = "fp32 fp64_6", shapes = kDefaultShapes;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "amxblas_model_check: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--backend") {
            if (!kernels::parse_backend(next(), &backend)) return std::fprintf(stderr, "unknown backend\n"), 2;
        } else if (a == "--threads") threads = std::atoi(next());
        else if (a == "--reps") reps = std::max(1, std::atoi(next()));
        else if (a == "--routes") routes = next();
        else if (a == "--shapes") shapes = next();
        else if (a == "--calibrate") calibrate = true;
        else return std::fprintf(stderr, "amxblas_model_check: unknown option %s\n", a.c_str()), 2;
    }
    if (!kernels::backend_usable(backend, false)) {
        std::printf("backend %s cannot run on this machine: model check skipped\n", kernels::backend_name(backend));
        return 0;
    }
    openblas_set_num_threads(threads);
    std::printf("== Cost model against measured times: backend %s, %d threads, medians of %d alternated rounds after a "
                "warm-up round ==\n", kernels::backend_name(backend), threads, reps);
    std::printf("%-16s %-7s %11s %11s %7s %10s %10s %7s %9s %9s\n", "MxNxK", "route", "routed_ms", "predict_ms",
                "err%", "blas_ms", "bl_pred_ms", "err%", "speedup", "sp_pred");
    std::map<std::string, std::vector<double>> rates;
    std::map<std::string, std::vector<std::pair<double, double>>> fits;  // (1 / steps per tile, step time)
    // INT8 rows of several K chunks, per core: the last chunk's values, the folds', the seconds.
    struct FoldRow {
        double last_values, fold_values, recon_s;
    };
    std::vector<FoldRow> folds;
    int rows = 0, within30 = 0;
    double worst = 0;
    std::istringstream rs(routes);
    std::vector<std::string> route_list;
    for (std::string w; rs >> w;) route_list.push_back(w);
    std::vector<Case> cases;
    std::istringstream ss(shapes);
    for (std::string w; ss >> w;) {
        Shape sh{};
        if (std::sscanf(w.c_str(), "%dx%dx%d", &sh.m, &sh.n, &sh.k) != 3) continue;
        for (const std::string& route : route_list) {
            Case c;
            c.s = sh;
            c.route = route;
            c.fp64 = route != "fp32";
            c.int8 = route.compare(0, 5, "int8_") == 0;
            c.untiled = c.int8 && calibrate;
            c.products = c.fp64 ? std::atoi(route.c_str() + 5) : 6;
            c.v = c.int8 ? &kernels::kVariants[0] : c.fp64 ? kernels::fp64_variant(c.products) : &kernels::kVariants[0];
            if (!c.v || (c.int8 && (c.products < kernels::kInt8MinModuli || c.products > kernels::kInt8MaxModuli))) {
                std::fprintf(stderr, "amxblas_model_check: unknown route %s\n", route.c_str());
                return 2;
            }
            test::Rng r(7);
            const std::size_t na = std::size_t(sh.m) * sh.k, nb = std::size_t(sh.k) * sh.n, nc = std::size_t(sh.m) * sh.n;
            if (c.fp64) {
                c.ad.resize(na), c.bd.resize(nb), c.cd.resize(nc);
                for (auto& x : c.ad) x = r.uniform();
                for (auto& x : c.bd) x = r.uniform();
            } else {
                c.af.resize(na), c.bf.resize(nb), c.cf.resize(nc);
                for (auto& x : c.af) x = float(r.uniform());
                for (auto& x : c.bf) x = float(r.uniform());
            }
            cases.push_back(std::move(c));
        }
    }
    // Rounds over the whole sweep (round 0 the warm-up): a burst of load from elsewhere on a
    // shared machine then falls on one run of many cases, not on every run of one.
    for (int round = 0; round <= reps; ++round)
        for (Case& c : cases) run_once(c, backend, threads, round > 0);
    for (Case& c : cases) {
        const Shape& s = c.s;
        const bool fp64 = c.fp64;
        const std::string& route = c.route;
        Measured me{median(c.routed), median(c.blas), {}, median(c.scans)};
        std::vector<std::size_t> idx(c.routed.size());
        for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
        std::sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return c.routed[x] < c.routed[y]; });
        me.phases = c.phases[idx[idx.size() / 2]];
        {
            const int products = c.products;
            const kernels::Variant* v = c.v;
            CostInput in;
            in.precision = fp64 ? kernels::Precision::fp64 : kernels::Precision::fp32;
            in.m = s.m, in.n = s.n, in.k = s.k;
            in.products = products;
            in.slices = v->slices;
            if (c.int8) in.engine = kernels::Fp64Engine::int8;
            in.backend = backend;
            in.threads = threads;
            const CostPrediction p = predict_cost(in);
            const double err = 100 * (p.routed_s / me.routed_s - 1), berr = 100 * (p.blas_s / me.blas_s - 1);
            ++rows;
            within30 += std::fabs(err) <= 30;
            worst = std::max(worst, std::fabs(err));
            char name[48];
            std::snprintf(name, sizeof name, "%dx%dx%d", s.m, s.n, s.k);
            std::printf("%-16s %-7s %11.3f %11.3f %+7.1f %10.3f %10.3f %+7.1f %9.3f %9.3f\n", name, route.c_str(),
                        1e3 * me.routed_s, 1e3 * p.routed_s, err, 1e3 * me.blas_s, 1e3 * p.blas_s, berr,
                        me.blas_s / me.routed_s, p.speedup);
            if (!calibrate) continue;
            // The per-core rates this run implies (what policy/cost_model.cc's table holds).
            const double per_thread = std::ceil(double(p.blocks) / threads) / double(p.blocks);
            const kernels::PhaseTimes& t = me.phases;
            const std::string pre = c.int8 ? "int8." : fp64 ? "fp64." : "fp32.";
            // The INT8 engine's reconstruction: the compute time of the same call without products.
            const double recon_s = c.int8 ? median(c.untiled_compute) : t.reconstruct_s;
            rates[pre + "step_s"].push_back((t.compute_s - recon_s) / per_thread / p.product_steps);
            // Each row's point for the fit of step_s + tile_s / (steps per tile), printed below.
            const double steps_per_tile = std::ceil(s.k / (c.int8 ? 64.0 : 32.0));
            fits[pre].push_back({1 / steps_per_tile, rates[pre + "step_s"].back()});
            if (t.split_pack_s > 0) rates[pre + "split_pack_bytes_s"].push_back(p.split_pack_bytes / (t.split_pack_s * threads));
            // One-chunk INT8 calls give the reconstruction's rate; calls of several K chunks the
            // folds' (below, once the run's reconstruction rate is known).
            if (recon_s > 0 && p.fold_values == 0) rates[pre + "recon_values_s"].push_back(p.recon_values * per_thread / recon_s);
            if (recon_s > 0 && p.fold_values > 0) folds.push_back({p.recon_values * per_thread, p.fold_values * per_thread, recon_s});
            if (!fp64 && me.scan_s > 0) rates["fp32.scan_bytes_s"].push_back(p.scan_bytes / (me.scan_s * threads));
            rates[pre + "blas_flops_s"].push_back(p.blas_flops / (me.blas_s * threads));
            rates[pre + "overhead_s"].push_back(me.routed_s - me.scan_s - t.split_pack_s - t.compute_s -
                                                t.certificate_s);
            std::printf("    implied: step %.0f ns, split+pack %.2f GB/s, recon %.3g values/s, overhead %.0f us\n",
                        1e9 * rates[pre + "step_s"].back(),
                        t.split_pack_s > 0 ? 1e-9 * rates[pre + "split_pack_bytes_s"].back() : 0.0,
                        recon_s > 0 && p.fold_values == 0 ? rates[pre + "recon_values_s"].back() : 0.0,
                        1e6 * rates[pre + "overhead_s"].back());
        }
    }

    std::printf("%d rows, %d within 30%% of the measured routed time, worst %.1f%%\n", rows, within30, worst);
    if (calibrate && !folds.empty()) {
        // The folds' time: the reconstruction's less its last chunk's part, at the rate this
        // run's one-chunk rows imply (the table's where it has none).
        const auto run = rates.find("int8.recon_values_s");
        std::vector<double> r = run != rates.end() ? run->second : std::vector<double>{};
        std::sort(r.begin(), r.end());
        const double recon_rate = r.empty() ? cost_constants(backend).recon_values_s_int8 : median(r);
        for (const FoldRow& f : folds)
            if (const double fold_s = f.recon_s - f.last_values / recon_rate; recon_rate > 0 && fold_s > 0)
                rates["int8.fold_values_s"].push_back(f.fold_values / fold_s);
    }
    if (calibrate) {
        std::printf("\nper-core rates implied by each row (median [min, max]; policy/cost_model.cc's constants):\n");
        for (auto& [name, v] : rates) {
            std::sort(v.begin(), v.end());
            std::printf("  %-26s %.4g  [%.4g, %.4g]  (%zu rows)\n", name.c_str(), median(v), v.front(), v.back(), v.size());
        }
        // The vector backends' product time per step, step_s + tile_s / (steps per tile): the
        // least-squares fit of each row's implied step time, in relative terms.
        for (auto& [pre, xy] : fits) {
            double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
            for (auto [x, y] : xy) a11 += 1 / (y * y), a12 += x / (y * y), a22 += x * x / (y * y), b1 += 1 / y, b2 += x / y;
            const double det = a11 * a22 - a12 * a12;
            if (det == 0) continue;
            std::printf("  %-26s %.4g  (fit with %stile_s, %zu rows)\n", (pre + "step_s").c_str(),
                        (b1 * a22 - b2 * a12) / det, pre.c_str(), xy.size());
            std::printf("  %-26s %.4g\n", (pre + "tile_s").c_str(), (a11 * b2 - a12 * b1) / det);
        }
    }
    return 0;
}

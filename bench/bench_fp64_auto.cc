// AMXBLAS_FP64_PRODUCTS=auto: the issue-11 targets that need timing or an exact reference,
// printed, never asserted (scripts/bench-fp64-auto.sh runs it; the bitwise and netlib targets
// are ctest tests).
//   1. accuracy at N (default 1024): uniform, log-uniform 2^-20..2^20 and cancellation inputs;
//      the max entrywise error against an exact reference (__float128 dot products on a sample
//      of entries), absolute and relative to (|A||B|)_ij, for OpenBLAS DGEMM, fixed FP64-21, -28
//      and -36 and auto, with auto's ratios to OpenBLAS (target <= 2);
//   2. cost at each --cost-n size (default 2048), uniform: the products auto picks (target <= 21)
//      and the share of the routed call its certificate takes (the lower-bound product and the
//      per-entry test; target <= 10%), with the auto call's total time against a fixed call with
//      the same products, medians of --reps runs after a warm-up; and the same share in the AMX
//      model (amx_model below: the extra product as tile work, the rest as measured here).
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/runtime/cpu_features.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/routed_gemm.h"
#include "bench/bench.h"
#include "bench/real_blas_threads.h"

using namespace amxblas;
using namespace amxblas::bench;

namespace {

struct Options {
    int n = 1024, threads = 2, reps = 3, sample = 2048;
    std::vector<int> cost_n = {2048};
    double tol = 1;
    kernels::Backend backend = kernels::Backend::avx512;
};

[[noreturn]] void usage(int rc) {
    std::printf(
        "usage: amxblas_bench_fp64_auto [--n N] [--cost-n \"N ...\"] [--threads T] [--reps R] [--sample S]\n"
        "                               [--backend avx512|reference] [--tol F]\n");
    std::exit(rc);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int q = 1; q < argc; ++q) {
        const std::string a = argv[q];
        auto value = [&]() -> int {
            if (q + 1 >= argc) usage(2);
            return std::atoi(argv[++q]);
        };
        if (a == "--n") o.n = value();
        else if (a == "--cost-n") {  // one size or a quoted list: --cost-n "256 512 1024 2048"
            if (q + 1 >= argc) usage(2);
            o.cost_n.clear();
            for (std::istringstream in(argv[++q]); in;) {
                int v = 0;
                if (in >> v) o.cost_n.push_back(v);
            }
        }
        else if (a == "--threads") o.threads = std::max(1, value());
        else if (a == "--reps") o.reps = std::max(1, value());
        else if (a == "--sample") o.sample = std::max(1, value());
        else if (a == "--tol") {
            if (q + 1 >= argc) usage(2);
            o.tol = std::atof(argv[++q]);
        }
        else if (a == "--backend") {
            if (q + 1 >= argc) usage(2);
            const std::string b = argv[++q];
            if (b == "avx512") o.backend = kernels::Backend::avx512;
            else if (b == "reference") o.backend = kernels::Backend::reference;
            else usage(2);
        } else if (a == "--help" || a == "-h") usage(0);
        else usage(2);
    }
    return o;
}

kernels::RunOptions run_options(const Options& o, int products, kernels::PhaseTimes* t, kernels::Fp64AutoReport* r) {
    kernels::RunOptions opt;
    opt.backend = o.backend;
    opt.fp64_products = products;
    opt.threads = o.threads;
    opt.times = t;
    opt.fp64_report = r;
    opt.fp64_tol = o.tol;
    return opt;
}

void accuracy(const Options& o) {
    const Shape s{o.n, o.n, o.n};
    std::printf("== FP64 auto: accuracy, N = %d, max entrywise error on %d sampled entries vs exact, tol %g ==\n",
                o.n, o.sample, o.tol);
    std::printf("%-13s %-10s %11s %11s %9s %9s %9s %7s\n", "input", "route", "max_abs", "max_rel", "abs/dgemm",
                "rel/dgemm", "products", "margin");
    for (InputClass ic : kAllInputs) {
        std::vector<double> a, b;
        make_inputs(ic, s, 7, &a, &b);
        const ExactSample ex = exact_sample(s, a, b, o.sample, 11);
        std::vector<double> c(std::size_t(s.m) * s.n);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, a.data(), s.m, b.data(), s.k, 0.0,
                    c.data(), s.m);
        const MaxErr ref = max_errors(c, s.m, ex);
        std::printf("%-13s %-10s %11.3e %11.3e %9s %9s %9s %7s\n", input_name(ic), "dgemm", ref.abs, ref.rel, "1",
                    "1", "-", "-");
        for (int products : {21, 28, 36, kernels::kFp64Auto}) {
            kernels::Fp64AutoReport rep;
            const kernels::GemmArgs<double> g{'N', 'N', s.m, s.n, s.k, 1.0, a.data(), s.m, b.data(), s.k, 0.0, c.data(), s.m};
            const char* why = emulate_gemm(g, run_options(o, products, nullptr, &rep));
            const bool is_auto = products == kernels::kFp64Auto;
            char route[16] = "auto";
            if (!is_auto) std::snprintf(route, sizeof route, "fp64_%d", products);
            if (why) {
                std::printf("%-13s %-10s forwarded: %s\n", input_name(ic), route, why);
                continue;
            }
            const MaxErr e = max_errors(c, s.m, ex);
            char pr[16] = "", mg[16] = "-";
            std::snprintf(pr, sizeof pr, "%d", products);
            if (is_auto) {
                std::snprintf(pr, sizeof pr, "%d", rep.products);
                std::snprintf(mg, sizeof mg, "%.2f", rep.margin);
            }
            std::printf("%-13s %-10s %11.3e %11.3e %9.2f %9.2f %9s %7s\n", input_name(ic), route,
                        e.abs, e.rel, ref.abs > 0 ? e.abs / ref.abs : 0.0, ref.rel > 0 ? e.rel / ref.rel : 0.0, pr, mg);
            if (is_auto)
                std::printf("%s %s auto N=%d: max entrywise error %.2fx OpenBLAS DGEMM's (abs), %.2fx (rel), target <= 2\n",
                            e.abs <= 2 * ref.abs && e.rel <= 2 * ref.rel ? "PASS" : "MISS", input_name(ic), o.n,
                            e.abs / ref.abs, e.rel / ref.rel);
        }
    }
}

// The AMX model of one routed call (bench/bench_model.cc's method): the tile work from
// the driver's tile-instruction counts (bench_amx.cc, checked against the harness), every
// other phase as measured here on the AVX-512 side. Fixed: split + pack, reconstruction and
// the products' tiles. Auto adds the certificate: one more product's tiles (|Z_0^A| |Z_0^B|)
// and its widen-adds, and the per-entry test; its split (the facts and norms of six slices,
// eight where entries fail at six) is measured as it is.
struct AmxModel {
    double fixed_s = 0, auto_s = 0, cert_s = 0;
};

AmxModel amx_model(const Shape& s, int products, int cores, double sp_fixed, double sp_auto, double recon_s,
                   double test_s) {
    const Route r = products == 6 ? Route::fp64_6 : products == 10 ? Route::fp64_10 : products == 15 ? Route::fp64_15
                                                                                                    : Route::fp64_21;
    const TileCounts c = tile_counts(r, s);
    const double np = route_products(r);
    const double tiles = tile_seconds(c, cores) * products / np;  // counts are linear in the products
    const double one_product = tiles / products;
    AmxModel m;
    m.fixed_s = sp_fixed + recon_s + tiles;
    m.cert_s = one_product + recon_s / products + test_s;
    m.auto_s = sp_auto + recon_s + tiles + m.cert_s;
    return m;
}

void cost(const Options& o, int n) {
    const Shape s{n, n, n};
    std::vector<double> a, b;
    make_inputs(InputClass::uniform, s, 3, &a, &b);
    std::vector<double> c(std::size_t(s.m) * s.n);
    const kernels::GemmArgs<double> g{'N', 'N', s.m, s.n, s.k, 1.0, a.data(), s.m, b.data(), s.k, 0.0, c.data(), s.m};
    std::printf("\n== FP64 auto: cost, uniform N = %d, %d threads, median of %d after a warm-up (shared machine) ==\n", n,
                o.threads, o.reps);
    kernels::Fp64AutoReport rep;
    wait_for_real_blas_threads_to_sleep();  // the accuracy section's DGEMMs ran just before
    if (const char* why = emulate_gemm(g, run_options(o, kernels::kFp64Auto, nullptr, &rep))) {
        std::printf("auto forwarded: %s\n", why);
        return;
    }
    const int products = rep.products;
    std::vector<double> total_auto, cert, test, split_auto, compute_auto, total_fixed, split_fixed, recon_fixed;
    for (int r = 0; r < o.reps; ++r) {
        for (int fixed = 0; fixed < 2; ++fixed) {  // side by side, alternating
            kernels::PhaseTimes t;
            const double t0 = now_s();
            emulate_gemm(g, run_options(o, fixed ? products : kernels::kFp64Auto, &t, nullptr));
            const double dt = now_s() - t0;
            if (fixed) {
                total_fixed.push_back(dt);
                split_fixed.push_back(t.split_pack_s);
                recon_fixed.push_back(t.reconstruct_s);
            } else {
                total_auto.push_back(dt);
                cert.push_back(t.certificate_s);
                test.push_back(t.certificate_test_s);
                split_auto.push_back(t.split_pack_s);
                compute_auto.push_back(t.compute_s);
            }
        }
    }
    const double share = median(cert) / median(total_auto);
    std::printf("products picked %d (margin %.2f, repaired %ld)\n", products, rep.margin, rep.repaired);
    std::printf("auto call %.3f s: split+pack %.3f s, certificate %.3f s (per-entry test %.3f s), products %.3f s;\n"
                "     fixed %d-product call %.3f s (split+pack %.3f s)\n",
                median(total_auto), median(split_auto), median(cert), median(test), median(compute_auto), products,
                median(total_fixed), median(split_fixed));
    std::printf("%s auto N=%d picks %d products, target <= 21\n", products <= 21 ? "PASS" : "MISS", n, products);
    std::printf("%s certificate share of the routed call on %s, N=%d: %.1f%% (lower-bound product %.1f%%, per-entry "
                "test %.1f%%), target <= 10%%\n",
                share <= 0.10 ? "PASS" : "MISS", kernels::backend_name(o.backend), n, 100 * share,
                100 * (median(cert) - median(test)) / median(total_auto), 100 * median(test) / median(total_auto));
    std::printf("     whole auto call / fixed %d-product call: %.3f (also counts the norms of the %d slices it splits first)\n",
                products, median(total_auto) / median(total_fixed), kernels::kFp64AutoFirstDepth);
    const AmxModel m = amx_model(s, products, o.threads, median(split_fixed), median(split_auto), median(recon_fixed),
                                 median(test));
    // Every CPU with AMX has AVX-512: without it here, the phases measured ran the portable
    // split and reconstruction, which no AMX machine runs (as in bench_model.cc), so no verdict.
    const char* verdict = !kernels::cpu_has_avx512_split() ? "not judged (no AVX-512 here):"
                          : m.cert_s <= 0.10 * m.auto_s ? "PASS"
                                                        : "MISS";
    std::printf("%s certificate share of the routed call in the AMX model, N=%d: %.1f%% (one product's tiles and "
                "widen-adds + the per-entry test %.3f s), target <= 10%%\n",
                verdict, n, 100 * m.cert_s / m.auto_s, median(test));
    std::printf("     AMX model: auto call %.1f ms, fixed %d-product call %.1f ms (ratio %.3f); tiles at %.1f GHz, "
                "%d cores; the rest measured here\n",
                1e3 * m.auto_s, products, 1e3 * m.fixed_s, m.auto_s / m.fixed_s, kAmxClockHz / 1e9, o.threads);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    if (o.n > 0) accuracy(o);
    for (int n : o.cost_n)
        if (n > 0) cost(o, n);
    return 0;
}

// Part 5 of amxblas_bench_int8: what a call that FP64 auto forwards costs, against calling
// OpenBLAS directly (issue 25's target: at most 1.10x). Under the default engine (automatic)
// a call the INT8 certificate cannot pass goes on to BF16's auto, and a call neither passes
// is forwarded: the user pays both attempts and then OpenBLAS's call, or, where a sample of
// the call's entries mostly fails (docs/fp64-certificate.md, Section 11), the sample's
// attempts instead. Timed: the captured DFT
// calls the automatic engine forwards (with --dft), and N = 256 and 1024 inputs that no count
// of either engine can certify (below); each as attempt + OpenBLAS against OpenBLAS alone,
// alternated, medians of --reps after a warm-up.
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/driver/routed_gemm.h"
#include "scripts/replay/gemm_file.h"
#include "bench/bench_int8.h"
#include "tests/common/rng.h"

namespace amxblas::bench {
namespace {

// N x N x N, no entry certifiable: every term of (AB)_ij is about 2^-80 (A's first K/2
// columns meet B's tiny rows, A's tiny columns B's last rows), so (|A||B|)_ij is about
// K 2^-80, while the rows and columns the bounds of both engines start from have entries near
// 1: their truncation bounds (2^-91 or more for INT8's 24 moduli, more for BF16's 36 products)
// exceed DGEMM's gamma_K (|A||B|)_ij ~ K^2 2^-133 everywhere (the N x N version of
// kernels_int8_test's test_uncertifiable_forwarded).
replay::GemmFile uncertifiable(int n) {
    replay::GemmFile g;
    g.routine = "dgemm";
    g.m = g.n = g.k = n;
    g.lda = g.ldb = g.ldc = n;
    g.alpha[0] = 1;
    g.beta[0] = 0;
    g.a.resize(std::size_t(n) * n);
    g.b.resize(std::size_t(n) * n);
    g.c.assign(std::size_t(n) * n, 0.0);
    test::Rng rng(41);
    const auto unit = [&rng] { return 0.75 + 0.25 * rng.uniform(); };  // [0.5, 1)
    const double tiny = 0x1p-80;
    for (int l = 0; l < n; ++l)
        for (int i = 0; i < n; ++i) {
            g.a[i + std::size_t(l) * n] = (l < n / 2 ? 1.0 : tiny) * unit();
            g.b[l + std::size_t(i) * n] = (l < n / 2 ? tiny : 1.0) * unit();
        }
    return g;
}

struct Timed {
    // Medians: the forwarded attempt + OpenBLAS; OpenBLAS alone; the INT8 engine's attempt alone.
    double attempt_s = 0, openblas_s = 0, int8_s = 0;
    const char* why = nullptr;
};

Timed time_forwarded(const Int8Options& o, const replay::GemmFile& g) {
    std::vector<double> c;
    std::vector<double> both, alone, int8;
    Timed t;
    const kernels::RunOptions opt = int8_options(o, kernels::Fp64Engine::automatic, kernels::kFp64Auto, nullptr, nullptr);
    const kernels::RunOptions int8_only = int8_options(o, kernels::Fp64Engine::int8, kernels::kFp64Auto, nullptr, nullptr);
    // C gets its initial values before each timed call, untimed: a program's call finds its C
    // in place, and a forwarded call leaves it untouched for OpenBLAS. At least o.reps
    // repetitions, more where OpenBLAS's call is short (up to 0.2 s of it, at most 401): at
    // N = 256 the attempt is a tenth of OpenBLAS's 0.3 ms, and OpenBLAS's own time moves by as
    // much from one call to the next here, so a median of five moved the ratio by 0.2.
    int reps = o.reps;
    for (int r = 0; r <= reps; ++r) {  // r = 0: the warm-up
        c = g.c;
        const double t0 = now_s();
        t.why = routed_in(g, opt, &c);
        if (t.why) openblas_in(g, &c);  // what the library does next
        const double t1 = now_s();
        c = g.c;
        const double t2 = now_s();
        openblas_in(g, &c);
        const double t3 = now_s();
        c = g.c;
        const double t4 = now_s();
        routed_in(g, int8_only, &c);
        const double t5 = now_s();
        if (r == 0) {
            reps = std::max(o.reps, std::min(401, int(0.2 / std::max(t3 - t2, 1e-6))));
            continue;
        }
        both.push_back(t1 - t0);
        alone.push_back(t3 - t2);
        int8.push_back(t5 - t4);
    }
    t.attempt_s = median(both);
    t.openblas_s = median(alone);
    t.int8_s = median(int8);
    return t;
}

}  // namespace

void run_int8_forwarded(const Int8Options& o) {
    std::printf("\n== Forwarded auto calls: the attempt (INT8 auto, then BF16 auto, the default engine) + OpenBLAS against "
                "OpenBLAS alone; backend %s, %d threads, alternated, median of at least %d after a warm-up (of up to 401 "
                "where OpenBLAS's call is short: 0.2 s of it) ==\n",
                kernels::backend_name(o.backend), o.threads, o.reps);
    std::printf("fwd: the forwarded call as the library makes it; int8: the INT8 engine's attempt alone (the rest of fwd "
                "less OpenBLAS's call is BF16's)\n");
    std::printf("%-34s %12s %12s %7s %12s  %s\n", "call", "fwd_ms", "openblas_ms", "ratio", "int8_ms", "reason");
    openblas_set_num_threads(o.threads);
    std::vector<std::pair<std::string, replay::GemmFile>> calls;
    for (int n : o.quick ? std::vector<int>{256} : std::vector<int>{256, 1024})
        calls.emplace_back("uncertifiable " + std::to_string(n) + "^3", uncertifiable(n));
    if (!o.dft_dir.empty()) {
        // The captured calls the automatic engine forwards: found by one attempt each.
        const kernels::RunOptions opt =
            int8_options(o, kernels::Fp64Engine::automatic, kernels::kFp64Auto, nullptr, nullptr);
        for (const std::string& name : gemm_files(o.dft_dir)) {
            replay::GemmFile g;
            std::string err;
            std::vector<double> c;
            if (!replay::read_gemm_file((o.dft_dir + "/" + name).c_str(), &g, &err) || g.single) continue;
            if (routed(g, opt, &c)) calls.emplace_back(name, std::move(g));
        }
    }
    double worst = 0;
    int forwarded = 0;
    for (const auto& [name, g] : calls) {
        const Timed t = time_forwarded(o, g);
        if (!t.why) {
            std::printf("%-34s routed (not a forwarded call on this backend)\n", name.c_str());
            continue;
        }
        ++forwarded;
        const double ratio = t.openblas_s > 0 ? t.attempt_s / t.openblas_s : 0;
        worst = std::max(worst, ratio);
        std::printf("%-34s %12.3f %12.3f %7.2f %12.3f  %s\n", name.c_str(), 1e3 * t.attempt_s, 1e3 * t.openblas_s, ratio,
                    1e3 * t.int8_s, t.why);
    }
    if (forwarded == 0) return;
    char what[200];
    std::snprintf(what, sizeof what,
                  "forwarded auto calls: at most %.2fx calling OpenBLAS directly (%d calls), target <= 1.10", worst,
                  forwarded);
    verdict(worst <= 1.10, what);
}

}  // namespace amxblas::bench

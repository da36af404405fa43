// CGEMM and ZGEMM: OpenBLAS against the routes of amxblas (FP32; FP64 with 6, 10, 15 and 21
// products, and auto, whose row names the products it picked: zgemm_auto_pN), side by side in one process, on uniform [-1, 1] complex square matrices (real and
// imaginary parts independent). Times are medians of --reps runs after a warm-up; GF/s count
// 8 N^3 real flops; the errors are against OpenBLAS's result of the same precision:
//   eF      = ||C - C_openblas||_F / ||C_openblas||_F
//   escaled = max_ij |C - C_openblas|_ij / (|A| |B|)_ij   (complex moduli)
// Writes complex.csv in --out. Run by scripts/bench.sh (its complex section).
//
//   amxblas_bench_complex [--backend avx512|reference] [--sizes "256 512 1024"] [--reps R]
//                         [--threads T] [--out DIR] [--quick]
#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/routed_gemm.h"
#include "tests/common/blas.h"
#include "tests/common/metrics.h"
#include "tests/common/rng.h"
#include "bench/real_blas_threads.h"

namespace {

using amxblas::kernels::Backend;
using amxblas::kernels::GemmArgs;
using amxblas::kernels::RunOptions;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <typename R>
std::vector<std::complex<R>> uniform(std::size_t n, std::uint64_t seed) {
    std::vector<std::complex<R>> v(n);
    amxblas::test::Rng r(seed);
    for (auto& x : v) {
        const double re = r.uniform();
        x = {R(re), R(r.uniform())};
    }
    return v;
}

struct Row {
    int n;
    std::string route;
    double seconds, eF, escaled;
    double baseline_seconds;
};

template <typename R>
void openblas(int n, const std::complex<R>* a, const std::complex<R>* b, std::complex<R>* c) {
    const std::complex<R> one(1), zero(0);
    if constexpr (sizeof(R) == 4)
        cblas_cgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, &one, a, n, b, n, &zero, c, n);
    else
        cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, &one, a, n, b, n, &zero, c, n);
}

template <typename R>
void measure(int n, Backend backend, int threads, int reps, std::vector<Row>* rows) {
    const std::size_t nn = std::size_t(n) * n;
    const auto a = uniform<R>(nn, 1), b = uniform<R>(nn, 2);
    std::vector<std::complex<R>> ref(nn), c(nn);
    // (|A| |B|)_ij by one real DGEMM on the moduli.
    std::vector<double> absa(nn), absb(nn), absab(nn);
    for (std::size_t i = 0; i < nn; ++i) absa[i] = std::abs(std::complex<double>(a[i])), absb[i] = std::abs(std::complex<double>(b[i]));
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, absa.data(), n, absb.data(), n, 0.0, absab.data(), n);

    std::vector<double> t;
    openblas<R>(n, a.data(), b.data(), ref.data());  // warm-up
    for (int r = 0; r < reps; ++r) {
        const double t0 = now_s();
        openblas<R>(n, a.data(), b.data(), ref.data());
        t.push_back(now_s() - t0);
    }
    const double base = median(t);
    rows->push_back({n, sizeof(R) == 4 ? "openblas_cgemm" : "openblas_zgemm", base, 0, 0, base});

    amxblas::bench::wait_for_real_blas_threads_to_sleep();
    const std::vector<int> products =
        sizeof(R) == 4 ? std::vector<int>{6} : std::vector<int>{6, 10, 15, 21, amxblas::kernels::kFp64Auto};
    for (int p : products) {
        RunOptions opt;
        opt.backend = backend;
        opt.threads = threads;
        opt.fp64_products = p;
        amxblas::kernels::Fp64AutoReport report;
        opt.fp64_report = &report;
        const GemmArgs<std::complex<R>> g{'N', 'N', n, n, n, std::complex<R>(1), a.data(), n, b.data(), n,
                                          std::complex<R>(0), c.data(), n};
        t.clear();
        for (int r = 0; r <= reps; ++r) {  // run 0 is the warm-up
            const double t0 = now_s();
            if (const char* why = amxblas::kernels::emulate_gemm(g, opt)) {
                std::fprintf(stderr, "bench_complex: N=%d forwarded: %s\n", n, why);
                std::exit(1);
            }
            if (r > 0) t.push_back(now_s() - t0);
        }
        const amxblas::test::Errors e = amxblas::test::errors(c, ref, absab);
        const std::string route = sizeof(R) == 4                    ? "cgemm_fp32"
                                  : p == amxblas::kernels::kFp64Auto ? "zgemm_auto_p" + std::to_string(report.products)
                                                                     : "zgemm_fp64_" + std::to_string(p);
        rows->push_back({n, route, median(t), e.eF, e.escaled, base});
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string backend_name = "avx512", sizes = "256 512 1024", out = ".";
    int reps = 5;
    int threads = int(sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (arg == "--backend") backend_name = value();
        else if (arg == "--sizes") sizes = value();
        else if (arg == "--reps") reps = std::atoi(value().c_str());
        else if (arg == "--threads") threads = std::atoi(value().c_str());
        else if (arg == "--out") out = value();
        else if (arg == "--quick") sizes = "64", reps = 1;
        else {
            std::fprintf(stderr, "bench_complex: unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    Backend backend;
    if (backend_name == "avx512") backend = Backend::avx512;
    else if (backend_name == "reference") backend = Backend::reference;
    else {
        std::fprintf(stderr, "bench_complex: --backend avx512|reference\n");
        return 2;
    }
    if (!amxblas::kernels::backend_runnable_on_cpu(backend)) {
        std::printf("complex section: backend %s cannot run here: skipped\n", backend_name.c_str());
        return 0;
    }
    openblas_set_num_threads(threads);
    std::vector<Row> rows;
    std::istringstream ss(sizes);
    for (int n; ss >> n;) {
        measure<float>(n, backend, threads, std::max(1, reps), &rows);
        measure<double>(n, backend, threads, std::max(1, reps), &rows);
    }
    std::printf("\nComplex GEMM (CGEMM, ZGEMM), backend %s, %d threads, median of %d after a warm-up;\n"
                "GF/s = 8 N^3 / time; speedup = OpenBLAS time / route time; errors against OpenBLAS\n\n",
                backend_name.c_str(), threads, reps);
    std::printf("%-6s %-16s %10s %8s %8s %10s %10s\n", "N", "route", "time_ms", "GF/s", "speedup", "eF", "escaled");
    const std::string csv_path = out + "/complex.csv";
    FILE* csv = std::fopen(csv_path.c_str(), "w");
    if (csv) std::fprintf(csv, "n,route,time_s,gflops,speedup,eF,escaled\n");
    for (const Row& r : rows) {
        const double gf = 8.0 * r.n * double(r.n) * r.n / r.seconds * 1e-9;
        const bool base = r.route.rfind("openblas", 0) == 0;
        if (base)
            std::printf("%-6d %-16s %10.3f %8.2f %8.3f %10s %10s\n", r.n, r.route.c_str(), r.seconds * 1e3, gf, 1.0, "-", "-");
        else
            std::printf("%-6d %-16s %10.3f %8.2f %8.3f %10.2e %10.2e\n", r.n, r.route.c_str(), r.seconds * 1e3, gf,
                        r.baseline_seconds / r.seconds, r.eF, r.escaled);
        if (csv)
            std::fprintf(csv, "%d,%s,%.6g,%.6g,%.6g,%.3g,%.3g\n", r.n, r.route.c_str(), r.seconds, gf,
                         r.baseline_seconds / r.seconds, r.eF, r.escaled);
    }
    if (csv) std::fclose(csv);
    return 0;
}

// The cost of the domain scan against an OpenBLAS GEMM of the same size.
//
//   amxblas_scan_bench [N ...]      (default: 256 512 1024)
//
// For each N: the best of several runs of OpenBLAS DGEMM and SGEMM (N x N x N, whatever
// threads OpenBLAS uses: OPENBLAS_NUM_THREADS), of the domain check (shim/domain_check.h)
// (the scan of A and B plus the rules) with the implementation this CPU gets, and of the
// portable scan alone; prints times and the ratios scan / GEMM. Not a CTest test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "shim/domain_check.h"
#include "tests/common/blas.h"
#include "tests/common/rng.h"


namespace {

template <typename F>
double best_seconds(F f, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s < best) best = s;
    }
    return best;
}

volatile const char* g_sink;

template <typename T>
void run(int n) {
    amxblas::test::Rng rng(1);
    std::vector<T> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size(), 0);
    for (T& x : a) x = T(rng.uniform());
    for (T& x : b) x = T(rng.uniform());
    const T one = 1, zero = 0;
    const int reps = n <= 512 ? 7 : 4;
    const amxblas::kernels::GemmArgs<T> args{'N', 'N', n, n, n, one, a.data(), n, b.data(), n, zero,
                                    c.data(), n};
    double gemm, check, check2t, portable;
    const char* name;
    if constexpr (sizeof(T) == 8) {
        name = "dgemm";
        gemm = best_seconds([&] {
            dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n, 1, 1);
        }, reps);
        check = best_seconds([&] { g_sink = amxblas::check_domain(args); }, reps);
        check2t = best_seconds([&] { g_sink = amxblas::check_domain(args, 2); }, reps);
        portable = best_seconds([&] {
            amxblas::kernels::scan_fp64_with(amxblas::kernels::ScanImpl::portable, a.data(), n, n, n);
            amxblas::kernels::scan_fp64_with(amxblas::kernels::ScanImpl::portable, b.data(), n, n, n);
        }, reps);
    } else {
        name = "sgemm";
        gemm = best_seconds([&] {
            sgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n, 1, 1);
        }, reps);
        check = best_seconds([&] { g_sink = amxblas::check_domain(args); }, reps);
        check2t = best_seconds([&] { g_sink = amxblas::check_domain(args, 2); }, reps);
        portable = best_seconds([&] {
            amxblas::kernels::scan_fp32_with(amxblas::kernels::ScanImpl::portable, a.data(), n, n, n);
            amxblas::kernels::scan_fp32_with(amxblas::kernels::ScanImpl::portable, b.data(), n, n, n);
        }, reps);
    }
    std::printf("%s N=%5d  gemm %9.3f ms  check(%s) %8.3f ms  ratio %6.4f  check2t %8.3f ms  1t/2t %5.2f"
                "  portable scan %8.3f ms  ratio %6.4f\n",
                name, n, gemm * 1e3, amxblas::kernels::scan_impl_name(amxblas::kernels::scan_impl()), check * 1e3,
                check / gemm, check2t * 1e3, check / check2t, portable * 1e3, portable / gemm);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {256, 512, 1024};
    for (int n : sizes) {
        run<double>(n);
        run<float>(n);
    }
    return 0;
}

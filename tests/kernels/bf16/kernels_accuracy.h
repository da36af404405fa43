// The measurement behind kernels_accuracy_test and kernels_accuracy_table, next to the paper's
// Table 4 (tests/common/table4.h): square uniform [-1, 1] inputs, alpha = 1, beta = 0,
// OpenBLAS as Cref.
#pragma once

#include "tests/common/table4.h"
#include "tests/kernels/kernels_test_util.h"

namespace kt {

using amxblas::test::kPaperVariantList;
using amxblas::test::PaperRow;
using amxblas::test::paper_row;
constexpr int kVariants = amxblas::test::kPaperVariants;  // FP32, FP64-6, FP64-10, FP64-15, FP64-21

// Runs all five variants at order n; returns false (and prints why) if a call was forwarded.
inline bool measure(int n, int threads, Errors out[kVariants]) {
    using namespace amxblas::kernels;
    const std::size_t nn = std::size_t(n) * n;
    const auto ad = random_matrix<double>(nn, 1000 + n), bd = random_matrix<double>(nn, 2000 + n);
    std::vector<float> af(ad.begin(), ad.end()), bf(bd.begin(), bd.end());
    {
        std::vector<float> c(nn), cref(nn);
        GemmArgs<float> g{'N', 'N', n, n, n, 1.0f, af.data(), n, bf.data(), n, 0.0f, c.data(), n};
        if (const char* why = amxblas::kernels::emulate_gemm(g, options(6, threads))) {
            std::printf("sgemm forwarded: %s\n", why);
            return false;
        }
        blas_gemm(g, cref.data());
        out[0] = metrics(c, cref, abs_product(g));
    }
    std::vector<double> c(nn), cref(nn);
    GemmArgs<double> g{'N', 'N', n, n, n, 1.0, ad.data(), n, bd.data(), n, 0.0, c.data(), n};
    blas_gemm(g, cref.data());
    const std::vector<double> ab = abs_product(g);
    for (int v = 1; v < kVariants; ++v) {
        if (const char* why = amxblas::kernels::emulate_gemm(g, options(kPaperVariantList[v].products, threads))) {
            std::printf("dgemm forwarded: %s\n", why);
            return false;
        }
        out[v] = metrics(c, cref, ab);
    }
    return true;
}

inline void print_row(int n, const Errors e[kVariants]) {
    const PaperRow* p = paper_row(n);
    std::printf("N=%-5d", n);
    for (int v = 0; v < kVariants; ++v) {
        std::printf(" | %-7s eF %.2e", kPaperVariantList[v].name, e[v].eF);
        if (p) std::printf(" (paper %.2e)", p->e[v].eF);
        std::printf(" esc %.2e", e[v].escaled);
        if (p) std::printf(" (paper %.2e)", p->e[v].escaled);
    }
    std::printf("\n");
}

}  // namespace kt

// Table 4 of the paper (Cui and Liu, arXiv:2609.04663) and the measurement behind kernels_accuracy_test and
// kernels_accuracy_table: square uniform [-1, 1] inputs, alpha = 1, beta = 0, OpenBLAS as Cref.
#pragma once

#include "tests/kernels/kernels_test_util.h"

namespace kt {

constexpr int kVariants = 5;  // FP32, FP64-6, FP64-10, FP64-15, FP64-21
inline const char* const kVariantNames[kVariants] = {"FP32", "FP64-6", "FP64-10", "FP64-15", "FP64-21"};
inline const int kVariantProducts[kVariants] = {6, 6, 10, 15, 21};

struct PaperRow {
    int n;
    Errors e[kVariants];
};

// {eF, escaled} per variant, Table 4.
inline const PaperRow kTable4[] = {
    {256, {{3.02e-7, 2.25e-7}, {1.49e-8, 5.46e-9}, {3.26e-11, 1.30e-11}, {6.95e-14, 2.49e-14}, {5.71e-16, 3.41e-16}}},
    {512, {{3.06e-7, 1.54e-7}, {1.49e-8, 4.41e-9}, {3.25e-11, 9.31e-12}, {6.94e-14, 1.88e-14}, {5.88e-16, 2.96e-16}}},
    {1024, {{3.59e-7, 1.22e-7}, {1.49e-8, 3.38e-9}, {3.26e-11, 6.93e-12}, {6.97e-14, 1.40e-14}, {6.96e-16, 2.79e-16}}},
};

inline const PaperRow* paper_row(int n) {
    for (const auto& r : kTable4)
        if (r.n == n) return &r;
    return nullptr;
}

// Runs all five variants at order n; returns false (and prints why) if a call was forwarded.
inline bool measure(int n, int threads, Errors out[kVariants]) {
    using namespace amxblas::kernels;
    const std::size_t nn = std::size_t(n) * n;
    const auto ad = random_matrix<double>(nn, 1000 + n), bd = random_matrix<double>(nn, 2000 + n);
    std::vector<float> af(ad.begin(), ad.end()), bf(bd.begin(), bd.end());
    {
        std::vector<float> c(nn), cref(nn);
        GemmArgs<float> g{'N', 'N', n, n, n, 1.0f, af.data(), n, bf.data(), n, 0.0f, c.data(), n};
        if (const char* why = amxblas::emulate_gemm(g, options(6, threads))) {
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
        if (const char* why = amxblas::emulate_gemm(g, options(kVariantProducts[v], threads))) {
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
        std::printf(" | %-7s eF %.2e", kVariantNames[v], e[v].ef);
        if (p) std::printf(" (paper %.2e)", p->e[v].ef);
        std::printf(" esc %.2e", e[v].escaled);
        if (p) std::printf(" (paper %.2e)", p->e[v].escaled);
    }
    std::printf("\n");
}

}  // namespace kt

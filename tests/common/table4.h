// Table 4 of the paper (Cui and Liu, "BF16 AMX GEMM emulation", arXiv:2609.04663, Table 4;
// the values as printed there): eF and escaled (Eqs. 20-21, tests/common/
// metrics.h) of AMX-FP32 against SGEMM and of AMX-FP64-6, -10, -15 and -21 against DGEMM
// (oneMKL), on square uniform random matrices in [-1, 1], alpha = 1, beta = 0. The tests and
// the benchmark compare with these; nothing else in the tree may hold a copy.
#pragma once

#include <cstring>

namespace amxblas::test {

// The five variants the paper measured, in its column order.
constexpr int kPaperVariants = 5;
struct PaperVariant {
    const char* name;    // the paper's column: "FP32", "FP64-6", ...
    const char* id;      // the row id of kernels/common/variants.def: "fp32", "fp64_6", ...
    int products;        // BF16 component products
};
inline constexpr PaperVariant kPaperVariantList[kPaperVariants] = {
    {"FP32", "fp32", 6}, {"FP64-6", "fp64_6", 6}, {"FP64-10", "fp64_10", 10}, {"FP64-15", "fp64_15", 15},
    {"FP64-21", "fp64_21", 21}};

struct PaperErrors {
    double eF, escaled;
};
struct PaperRow {
    int n;
    PaperErrors e[kPaperVariants];
};

inline constexpr PaperRow kTable4[] = {
    {256, {{3.02e-7, 2.25e-7}, {1.49e-8, 5.46e-9}, {3.26e-11, 1.30e-11}, {6.95e-14, 2.49e-14}, {5.71e-16, 3.41e-16}}},
    {512, {{3.06e-7, 1.54e-7}, {1.49e-8, 4.41e-9}, {3.25e-11, 9.31e-12}, {6.94e-14, 1.88e-14}, {5.88e-16, 2.96e-16}}},
    {1024, {{3.59e-7, 1.22e-7}, {1.49e-8, 3.38e-9}, {3.26e-11, 6.93e-12}, {6.97e-14, 1.40e-14}, {6.96e-16, 2.79e-16}}},
    {2048, {{3.72e-7, 9.41e-8}, {1.49e-8, 2.34e-9}, {3.25e-11, 5.10e-12}, {6.95e-14, 1.08e-14}, {7.45e-16, 2.16e-16}}},
    {4096, {{3.83e-7, 5.56e-8}, {1.49e-8, 1.73e-9}, {3.25e-11, 3.87e-12}, {6.96e-14, 7.65e-15}, {8.19e-16, 1.67e-16}}},
    {8192, {{3.97e-7, 4.16e-8}, {1.49e-8, 1.24e-9}, {3.25e-11, 2.86e-12}, {6.96e-14, 6.15e-15}, {9.41e-16, 1.52e-16}}},
    {16384, {{4.18e-7, 4.06e-8}, {1.49e-8, 9.36e-10}, {3.25e-11, 2.10e-12}, {6.96e-14, 4.40e-15}, {1.14e-15, 1.61e-16}}},
    {32768, {{4.58e-7, 3.75e-8}, {1.49e-8, 6.80e-10}, {3.25e-11, 1.48e-12}, {6.96e-14, 3.04e-15}, {1.46e-15, 1.93e-16}}},
};

// The row of order n, or nullptr.
inline const PaperRow* paper_row(int n) {
    for (const PaperRow& r : kTable4)
        if (r.n == n) return &r;
    return nullptr;
}

// The paper's column of the variant with row id `id` (kernels/common/variants.def), or -1.
inline int paper_column(const char* id) {
    for (int q = 0; q < kPaperVariants; ++q)
        if (std::strcmp(kPaperVariantList[q].id, id) == 0) return q;
    return -1;
}

}  // namespace amxblas::test

// The error a routed (emulated) GEMM may have, entry by entry: the one place the fuzz test
// (and any other test that wants it) takes the documented bound from, so that tightening the
// method tightens the check here and nowhere else.
//
// The quantities, for entry (i, j) of C := alpha * op(A) op(B) + beta * C:
//   ab     sum_l |op(A)(i,l)| |op(B)(l,j)|, the magnitude the products can reach;
//   maxa   max |op(A)| over row i (maxb: over column j of op(B)); the FP64 split scales each
//          row of op(A) and column of op(B) by its own power of two (docs/accuracy.md), so the
//          row and column maxima are what the bound is relative to (the matrix maxima give a
//          looser bound that holds as well);
//   c0     C(i,j) before the call.
// Both bounds end with the smallest subnormal of the format: a result in the subnormal range
// is rounded to that absolute grid, whatever the relative terms say.
#pragma once

#include <cmath>

namespace amxblas_test {

struct EntryScale {
    double k = 0;      // the inner dimension K
    double alpha = 0;  // |alpha|
    double beta = 0;   // |beta|
    double ab = 0;
    double maxa = 0;
    double maxb = 0;
    double c0 = 0;     // |C(i,j)| before the call (ignored when beta = 0)
};

// FP32 (3 BF16 slices, 6 products). Slicing and the omitted products leave about 2^-24 of
// |a||b| per term, FP32 sums of the component products O(K) units of 2^-24 (the same order as
// SGEMM's own), and the final alpha/beta update a few more. Products and partial sums that
// AMX flushes to zero lose less than 2^-126 each: at most 6 products and 2 chain steps per K.
inline double fp32_routed_bound(const EntryScale& s) {
    const double beta_c = s.beta == 0 ? 0 : s.beta * s.c0;
    return s.alpha * (0x1p-22 * (s.k + 8) * s.ab + 16 * (s.k + 2) * 0x1p-126) + 0x1p-22 * beta_c + 0x1p-149;
}

// FP64 with `products` (6, 10, 15, 21, 28, 36) component products, i.e. d = 3 ... 8 diagonals
// of the d-slice split: the omitted tail is bounded by K maxa maxb times about 32 * 2^-9d (each
// slice carries 9 bits, Ozaki's sigma), the split's residual by 2^-53 of the maxima, and the
// FP64 sums of the exact per-panel FP32 sums by O(K) units of 2^-53 of |A||B|. In the subnormal
// range, as for auto below: the exact unscaling by 2^(e_i + f_j) may round once (2^-1075, which
// alpha then scales) and the update rounds alpha Chat, beta C and their sum once each.
inline double fp64_routed_bound(const EntryScale& s, int products) {
    const int d = products == 6 ? 3 : products == 10 ? 4 : products == 15 ? 5 : products == 21 ? 6
                  : products == 28 ? 7 : 8;
    const double tail = std::ldexp(32.0, -9 * d) + 0x1p-50;
    const double beta_c = s.beta == 0 ? 0 : s.beta * s.c0;
    return s.alpha * s.k * s.maxa * s.maxb * tail + 0x1p-50 * (s.k + 4) * (s.alpha * s.ab + beta_c) +
           (s.alpha + 4) * 0x1p-1074;
}

// FP64 with AMXBLAS_FP64_PRODUCTS=auto (any product count it picked, repairs included): the
// certificate's promise (docs/fp64-certificate.md) for the product before the update,
// |Chat_ij - (op(A) op(B))_ij| <= tol gamma_K (|A||B|)_ij, gamma_K = K u / (1 - K u),
// u = 2^-53, tol = AMXBLAS_FP64_TOL; then C := alpha Chat + beta C rounds alpha Chat, beta C
// and their sum once each (a few u of |alpha| (|A||B|)_ij and |beta C|), and the exact
// unscaling by 2^(e_i + f_j) may round once in the subnormal range (2^-1075, times alpha).
inline double fp64_auto_bound(const EntryScale& s, double tol) {
    const double ku = s.k * 0x1p-53, gamma_k = ku / (1 - ku);
    const double beta_c = s.beta == 0 ? 0 : s.beta * s.c0;
    return s.alpha * s.ab * (tol * gamma_k * (1 + 0x1p-20) + 0x1p-51) + 0x1p-51 * beta_c + (s.alpha + 4) * 0x1p-1074;
}

// The INT8 engine's CRT range for a count of moduli (docs/fp64-int8.md, Section 3, restated
// here on purpose): M the product of the first `moduli` of 256, 255, 253, ... (each coprime
// with those before it), R = floor(log2 M) - 2.
inline int int8_range_bits(int moduli) {
    static const int kModuli[] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217,
                                  211, 199, 197, 193, 191, 181, 179, 173, 167, 163, 157, 151};
    double log2m = 0;
    for (int l = 0; l < moduli && l < 24; ++l) log2m += std::log2(double(kModuli[l]));
    return int(std::floor(log2m)) - 2;
}

// FP64 on the INT8 engine with a fixed count of `moduli` (AMXBLAS_FP64_ENGINE=int8,
// AMXBLAS_FP64_PRODUCTS=6 ... 24; docs/fp64-int8.md, Section 4). The scaled rows and columns
// rounded to integers leave |(AB)_ij - P 2^-sigma| <= T_ij, with, unscaled,
// T_ij <= 2^e_i 2^(nu_i - h_A) ||b_j||_1 + 2^f_j 2^(nu'_j - h_B) ||a_i||_1
//         + K 2^(e_i + f_j) 2^(nu_i + nu'_j - R),
// h_A = floor(R / 2) <= h_B = R - h_A. Each 2^e is at most twice its row's (column's) largest
// |entry|, each 2^nu at most twice sqrt(K) (the scaled entries are at most 1; the code's upper
// bound of the 2-norm adds a relative 2^-20), and ||b_j||_1 <= K maxb, ||a_i||_1 <= K maxa:
// T_ij <= maxa maxb (8.1 K^1.5 2^-h_A + 16.5 K^2 2^-R). The reconstruction then rounds P once
// (u |P| <= u ((|A||B|)_ij + T_ij)), and the update as for auto below.
inline double fp64_int8_routed_bound(const EntryScale& s, int moduli) {
    const int r = int8_range_bits(moduli), h_a = r / 2;
    const double t = s.maxa * s.maxb * (8.1 * std::pow(s.k, 1.5) * std::ldexp(1.0, -h_a) + 16.5 * s.k * s.k * std::ldexp(1.0, -r));
    const double beta_c = s.beta == 0 ? 0 : s.beta * s.c0;
    return s.alpha * (s.ab * (0x1p-53 + 0x1p-51) + t * (1 + 0x1p-50)) + 0x1p-51 * beta_c + (s.alpha + 4) * 0x1p-1074;
}

}  // namespace amxblas_test

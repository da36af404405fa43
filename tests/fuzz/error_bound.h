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

}  // namespace amxblas_test

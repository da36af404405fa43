// How far a computed C is from the exact alpha op(A) op(B) + beta C (scripts/replay/exact_sum.h:
// every product exact, the sum rounded once), entry by entry, in two scales:
//
//   error = max_ij |C - C_exact|_ij / (|alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij|)
//
// (complex moduli for CGEMM and ZGEMM; C0 is C on entry), and
//
//   bound = max_ij |C - C_exact|_ij / B_ij,
//
// the ratio to the error bound of a GEMM computed by the reference BLAS's loops in the
// routine's precision (u = 2^-53, or 2^-24 for SGEMM and CGEMM; gamma_n = n u / (1 - n u)):
//
//   real:    B_ij = gamma_K |alpha| (|op(A)||op(B)|)_ij + gamma_2 (1 + gamma_K) S_ij
//   complex: per part, B^re_ij = gamma_{K+1} (|Re alpha| w^re_ij + |Im alpha| w^im_ij)
//                                + gamma_4 (1 + sqrt(2) gamma_{K+1}) S_ij, and B^im likewise
//            with w^re and w^im exchanged,
//
// where S_ij = |alpha| (|op(A)||op(B)|)_ij + |beta| |C0_ij| and w^re, w^im are the sums over l of
// |Re a||Re b| + |Im a||Im b| and |Re a||Im b| + |Im a||Re b| (docs/fp64-certificate.md, Section
// 9). The first term is the inner product's bound (DGEMM's gamma_K, ZGEMM's per-part
// gamma_{K+1}); the second is the update C := alpha P + beta C0 on top of it: 2 roundings per
// term in a real part (one product, one sum), 4 in a complex part (a product and at most 3
// sums of the 4 real products), of terms whose sum is at most (1 + the inner product's relative
// error) S_ij. bound <= 1: every entry is within the bound; AMXBLAS_FP64_PRODUCTS=auto with
// the default AMXBLAS_FP64_TOL=1 promises that for every routed DGEMM and ZGEMM.
//
// The sums |op(A)||op(B)| are taken in long double (a 64-bit significand): their relative
// error, below K 2^-63, moves the bounds by far less than the margins they are read with.
#pragma once

#include <vector>

#include "scripts/replay/gemm_file.h"

namespace amxblas::replay {

struct Accuracy {
    bool defined = true;  // false: a NaN or Inf among the values the call reads (no exact result)
    double error = 0;
    double bound = 0;
};

// c: the computed C, LDC x N as in g (complex values interleaved).
Accuracy measure(const GemmFile& g, const std::vector<double>& c);

}  // namespace amxblas::replay

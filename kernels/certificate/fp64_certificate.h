// The per-entry error certificate of the FP64 emulation (AMXBLAS_FP64_PRODUCTS=auto).
//
// Everything here is in the scaled units of the split (pack.h): Ahat = op(A) with row i
// multiplied by 2^-e_i, Bhat = op(B) with column j multiplied by 2^-f_j, so that C = alpha *
// 2^(e_i + f_j) * (Ahat Bhat)_ij + beta * C and a relative bound on (Ahat Bhat)_ij is the
// same relative bound on (op(A) op(B))_ij. With d slices per operand the driver computes
// Chat_ij, the FP64 sum (smallest product first) of the exact FP32 panel sums of the
// products Z^A_p Z^B_q, p + q < d. The certificate passes entry (i, j) at depth d when
//
//   (tau_ij(d) + E_ij(d) + eta) * (1 + 2^-30)  <=  tol * gamma_K * Lo_ij * (1 - 2^-30)
//
// with tau the truncation bound, E the FP64 accumulation bound, eta an underflow allowance,
// gamma_K = K u / (1 - K u), u = 2^-53, and Lo_ij a proven lower bound of (|Ahat||Bhat|)_ij.
// Then |Chat_ij - (Ahat Bhat)_ij| <= tol * gamma_K * (|Ahat||Bhat|)_ij: the bound the reference
// BLAS's error analysis gives DGEMM's inner products (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., Eq. (3.5)). The proof is docs/fp64-certificate.md; the
// names below follow it.
//
// Functions of what the split and one extra BF16 product found, and, for the rare entries
// whose lower bound is 0, of exact comparisons of the operands with zero (zero_by_structure),
// so the decision is the same on every backend and thread count: every input is exact or
// computed in a fixed order (kernels/driver/emulated_gemm.h, prepare_dgemm).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

struct Fp64Certificate {
    int depth = 0;        // d picked (3..D); 0 when no depth certifies enough entries
    long failing = 0;     // entries not certified at `depth` (to repair)
    double margin = 0;    // min over certified entries of rhs / lhs at `depth` (>= 1)
    std::vector<std::size_t> fail_at;  // i + j * m of each failing entry, ascending
};

// Picks the smallest depth d in [min_depth, D] at which every entry passes (two passes over
// the entries: each entry's smallest passing depth, then a check at their maximum); when some
// entry passes at no depth, the deepest, whose failing entries the caller repairs or forwards. lhat[i + j * ldl] is the FP64 sum, over the K panels
// in order, of the exact panel sums of |Z^A_0| |Z^B_0| / 2^(v_A(0) + v_B(0)) (one BF16 product
// on the matrix engine). Returns false when the inputs leave the certificate's assumptions
// (K u >= 2^-10); out->depth is then 0.
// a, b: what prepare_dgemm found (Fp64SplitFacts, with norms; zero may be nullptr).
// gamma_terms: the n of the bound gamma_n that tol multiplies; 0 means k (DGEMM's inner
// products). ZGEMM passes K + 1 for its real GEMM of depth k = 2K: per part, the bound of a
// complex inner product of length K in real arithmetic (docs/fp64-certificate.md, Section 9).
// zero_by_structure(i, j), if given, says whether entry (i, j) is zero by structure (every term
// has a zero factor: kernels/certificate/fp64_structural_zeros.h); it is asked only when some entry passes
// at no depth, and only for entries whose lhat is 0, and such entries then pass (they are
// computed exactly; Section 10).
bool fp64_certify(const Fp64SplitFacts& a, const Fp64SplitFacts& b, int k, const double* lhat,
                  int ldl, double tol, int min_depth, int threads, Fp64Certificate* out, int gamma_terms = 0,
                  const std::function<bool(int, int)>& zero_by_structure = {});

// The most entries an auto call may repair (recompute in FP64) instead of being forwarded:
// 1/16 of C, so the scalar repairs cost less than the routed products, but at least one entry
// (a small C, fewer than 32 entries, would otherwise allow none: netlib's 5 x 9 calls with one
// weak entry were forwarded), and fewer than half of C (a 1 x 1 or 1 x 2 C repaired whole
// would be DGEMM under another name).
long fp64_repair_limit(int m, int n);

}  // namespace amxblas::kernels

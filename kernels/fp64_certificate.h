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
// Pure functions of what the split and one extra BF16 product found (no matrix is read), so
// the decision is the same on every backend and thread count: every input is exact or
// computed in a fixed order.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/split.h"

namespace amxblas::kernels {

// What the certificate needs of one operand (op(A) by rows, op(B) by columns).
struct Fp64OperandBound {
    int outer = 0;           // rows of op(A) or columns of op(B)
    int slices = 0;          // D: slices split (the deepest depth the certificate may pick)
    int active = 0;          // slices 0..active-1 nonzero somewhere
    int v[kFp64Slices] = {}; // slice exponents v(p), p < active: |Z_p| <= 2^v(p) entrywise
    // rho[r] >= max |X^(r)| entrywise, r = 0..slices: the exact residual after r slices
    // (including the rounding of scaled values below 2^-1022, pack.h).
    double rho[kFp64Slices + 1] = {};
    // norms[p * outer + o] = sum over the row (column) o of |Z_p| / 2^v(p), the normalised
    // slice entries: exact (multiples of 2^-8, fewer than 2^45 of them).
    const double* norms = nullptr;
    // zero[o]: row (column) o of the operand is entirely zero, so (Ahat Bhat) and Chat are 0
    // there exactly; may be nullptr (none known).
    const unsigned char* zero = nullptr;
};

// rho[] of Fp64OperandBound from the split's residual maxima (Fp64Split::resid): the maxima
// themselves, or, when some scaled entry was rounded below 2^-1022 (subnormal_scaled), at
// least 2^-1000 with a relative margin that covers that rounding (<= 2^-1075 per entry).
void fp64_residual_bounds(const double* resid, int slices, bool subnormal_scaled, double* rho);

struct Fp64Certificate {
    int depth = 0;        // d picked (3..D); 0 when no depth certifies enough entries
    long failing = 0;     // entries not certified at `depth` (to repair)
    double margin = 0;    // min over certified entries of rhs / lhs at `depth` (>= 1)
    std::vector<std::size_t> fail_at;  // i + j * m of each failing entry, ascending
};

// Picks the smallest depth d in [min_depth, A.slices] at which every entry passes; when none
// does, the depth with the fewest failing entries (the deepest among equals), whose failing
// entries the caller repairs or forwards. lhat[i + j * ldl] is the FP64 sum, over the K panels
// in order, of the exact panel sums of |Z^A_0| |Z^B_0| / 2^(v_A(0) + v_B(0)) (one BF16 product
// on the matrix engine). Returns false when the inputs leave the certificate's assumptions
// (K u >= 2^-10); out->depth is then 0.
bool fp64_certify(const Fp64OperandBound& a, const Fp64OperandBound& b, int k, const double* lhat, int ldl,
                  double tol, int min_depth, int threads, Fp64Certificate* out);

}  // namespace amxblas::kernels

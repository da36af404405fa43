// Numeric-domain checks: can the BF16 component-product method represent this call's inputs
// exactly as the paper assumes? Each check returns nullptr when the call is in the domain,
// else the forward reason (policy/reasons.h). The checks read op(A) and op(B) once (one
// scan per operand, policy/domain_scan.h) and never write. The first failing rule, in the
// order listed, is the reason.
//
// Notation: BF16 normal range [2^-126, (2 - 2^-7) * 2^127]; BK = 256 is the reduction length
// of one kernel panel (paper Section 6.1): every FP32 sum the kernels form for one component
// product has at most min(K, BK) terms.
//
// FP32 (AMX-FP32: three slices A_r = bf16(A^(r)), A^(r+1) = A^(r) - A_r; six products summed
// in FP32 across panels and products):
//   1. alpha and beta finite                                   else domain:nonfinite-scalar
//   2. every entry finite                                       else domain:nonfinite
//   3. every nonzero |x| >= 2^-103: x is then a multiple of ulp(x) >= 2^(-103-23) = 2^-126,
//      so every residual and slice is 0 or >= 2^-126, a normal BF16 number (AMX reads a
//      denormal BF16 as zero)                                   else domain:too-small
//   4. max|A| * max|B| * K <= 2^127: every partial sum is at most sum |A_i||B_j| <=
//      (1 + 2^-7)^2 * K * max|A| * max|B| < FLT_MAX             else domain:overflow-risk
//   5. max|A| * max|B| >= 2^-102 (when both are nonzero): the low-order products
//      (2^-24 relative to the leading ones) stay at or above 2^-126, where AMX flushes
//      results to zero; below that the result is not FP32-accurate
//                                                               else domain:underflow-risk
//
// FP64 (AMX-FP64: six Ozaki slices per operand, v(r) = ceil(log2 max|X^(r)|), sigma(r) =
// 0.75 * 2^(v(r)+45), Z = fl(fl(X^(r) + sigma(r)) - sigma(r)), X_r = bf16(Z)). Facts used
// (proved in domain.cc):
//   (a) Z is a multiple of g(r) = 2^(v(r)-8) with |Z| <= 2^v(r), so it has at most 8
//       significant bits and is a BF16 number when 2^-126 <= |Z| <= (2 - 2^-7) * 2^127;
//   (b) |X^(r+1)| <= 2^(v(r)-9), so v(r+1) <= v(r) - 9 <= v(0) - 9(r+1);
//   (c) every residual and slice entry is a multiple of 2^L, L = min over entries of the
//       exponent of the lowest set bit (OperandSummary::min_lowbit), so a nonzero slice
//       entry is >= 2^L, and slice r can be nonzero only if v(r) >= L, i.e.
//       r <= (v(0) - L) / 9;
//   (d) the panel sum of product (i, j) is a multiple of g_A(i) * g_B(j) and at most
//       min(K, 256) * 2^(v_A(i) + v_B(j)) <= 2^24 g_A(i) g_B(j): exact in FP32 when no term
//       or partial sum leaves the FP32 normal range.
//   1. alpha and beta finite                                   else domain:nonfinite-scalar
//   2. every entry finite                                       else domain:nonfinite
//   3. every nonzero |x| >= 2^-126 (Eq. 2)                      else domain:subnormal
//   4. every |x| <= (2 - 2^-7) * 2^127 (Eq. 2)                  else domain:too-large
//   5. L >= -126 for each operand: by (c) every nonzero slice entry is then >= 2^-126, so
//      by (a) all six slices are normal BF16 numbers. Sufficient, not necessary: bits below
//      2^-126 that the split rounds away (they lie under every slice's grid) are harmless,
//      but telling those apart needs v(1..5), which only the split computes; it checks
//      exactly and returns the same reason              else domain:slice-subnormal
//   6. no overflow: v_A(0) + v_B(0) + ceil(log2 min(K, 256)) <= 127, which by (b)
//      and (d) bounds every product and panel sum by 2^127  else domain:overflow-risk
//   7. no underflow: passes when L_A + L_B >= -126 (by (c) every nonzero product and partial
//      sum is a multiple of 2^(L_A + L_B)). Otherwise, slice r's entries are multiples of
//      2^max(v(r) - 8, L) with v(r) <= v(0) - 9r; forwards when some retained product (i, j)
//      among the slices that can be nonzero, by (c), has
//      max(v_A(0) - 9i - 8, L_A) + max(v_B(0) - 9j - 8, L_B) < -126: even with the largest
//      exponents (b) allows, its granularity is below 2^-126, where AMX flushes terms and
//      partial sums to zero. This is a screen, not a proof: when a residual shrinks faster
//      than (b) requires, v(r) is smaller and the granularity finer; the exact rule on the
//      split's actual exponents is check_fp64_slice_exponents(), applied after the split.
//                                                               else domain:underflow-risk
#pragma once

#include <complex>

#include "kernels/gemm_types.h"
#include "policy/domain_scan.h"

namespace amxblas {

inline constexpr double kBf16MinNormal = 0x1p-126;
inline constexpr double kBf16MaxFinite = 0x1.FEp127;  // (2 - 2^-7) * 2^127
inline constexpr double kFp32MinInput = 0x1p-103;     // 2^(-126 + 23)
inline constexpr int kPanelK = 256;                  // BK: terms in one FP32 panel sum

// The summaries the scan computed, for callers (the kernels) that want to reuse them. When
// op(A) alone decides the reason (a nonfinite entry), b is left unscanned (all zero).
struct DomainScan {
    OperandSummary a, b;  // of op(A) and op(B)
};

const char* check_sgemm_domain(const kernels::GemmArgs<float>& args, DomainScan* scan = nullptr);
// products: 6, 10, 15 or 21 (the route's retained component products).
const char* check_dgemm_domain(const kernels::GemmArgs<double>& args, int products,
                               DomainScan* scan = nullptr);

// CGEMM and ZGEMM: the kernels compute a complex product as one real GEMM whose entries are
// the real and imaginary parts of op(A) and op(B) (some negated) and whose depth is 2K
// (kernels/complex_gemm.cc), so the FP32 and FP64 rules above apply to those parts, with
// 2K for K, and rule 1 to the real and imaginary parts of alpha and beta.
const char* check_cgemm_domain(const kernels::GemmArgs<std::complex<float>>& args,
                               DomainScan* scan = nullptr);
const char* check_zgemm_domain(const kernels::GemmArgs<std::complex<double>>& args, int products,
                               DomainScan* scan = nullptr);

// The rules above on precomputed summaries (pure; what check_*_domain apply after the scan).
const char* check_gemm_scalars(double alpha, double beta);  // rule 1
const char* fp32_domain_rule(const OperandSummary& a, const OperandSummary& b, int k);
const char* fp64_domain_rule(const OperandSummary& a, const OperandSummary& b, int products,
                             int k);

// The d of S_d = {(i, j) : i + j < d} (paper Eq. 15) of the FP64 variant with `products`
// products (kernels/variants.def: 6 -> 3, 10 -> 4, 15 -> 5, 21 -> 6); else 0.
int fp64_schedule_depth(int products);

// The exact product-range rule on the exponents the FP64 split actually found
// (kernels::prepare_dgemm reports them; policy/emulate.h applies this before
// kernels::compute_dgemm forms any product): for every retained
// (i, j) with i < a.active and j < b.active,
//   overflow:  v_A(i) + v_B(j) + ceil(log2 min(K, 256)) <= 127      else domain:overflow-risk
//   underflow: v_A(i) + v_B(j) - 16 >= -126 (granularity, fact (d)) else domain:underflow-risk
// v(r) = ceil(log2 max|X^(r)|), i.e. ilogb(sigma_r) - 44 for sigma_r = 0.75 * 2^(v(r)+45).
using SliceExponents = kernels::Fp64SplitFacts;
const char* check_fp64_slice_exponents(const SliceExponents& a, const SliceExponents& b,
                                       int products, int k);

}  // namespace amxblas

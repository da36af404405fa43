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
// FP64 (Ozaki slices of each row of op(A) and column of op(B) after an exact power-of-two
// scaling, each slice stored normalised; kernels/pack.h, kernels/split.h): every nonzero
// normalised slice entry lies in [2^-8, 1], every FP32 panel sum of a product of two slices is
// an exact multiple of 2^-16 of magnitude <= 2^8, and the scalings are powers of two applied
// in FP64. No finite input can leave the BF16 or FP32 range, so the only rules are:
//   1. alpha and beta finite                                   else domain:nonfinite-scalar
//   2. every entry finite                                       else domain:nonfinite
// (Before the scaling, the FP64 rules also forwarded subnormal, too-large and slice-subnormal
// inputs, and inputs whose slice products could overflow or underflow FP32: all gone.)
#pragma once

#include <complex>

#include "kernels/gemm_types.h"
#include "policy/domain_scan.h"

namespace amxblas {

inline constexpr double kFp32MinInput = 0x1p-103;     // 2^(-126 + 23)

// The summaries the scan computed, for callers (the kernels) that want to reuse them. When
// op(A) alone decides the reason (a nonfinite entry), b is left unscanned (all zero).
struct DomainScan {
    OperandSummary a, b;  // of op(A) and op(B)
};

// threads: how many threads may share the scan of a large operand (the call's own, from the
// routing decision); the result is the same for every count.
const char* check_sgemm_domain(const kernels::GemmArgs<float>& args, DomainScan* scan = nullptr, int threads = 1);
const char* check_dgemm_domain(const kernels::GemmArgs<double>& args, DomainScan* scan = nullptr, int threads = 1);

// CGEMM and ZGEMM: the kernels compute a complex product as one real GEMM whose entries are
// the real and imaginary parts of op(A) and op(B) (some negated) and whose depth is 2K
// (kernels/complex_gemm.cc), so the FP32 and FP64 rules above apply to those parts, with
// 2K for K, and rule 1 to the real and imaginary parts of alpha and beta.
const char* check_cgemm_domain(const kernels::GemmArgs<std::complex<float>>& args, DomainScan* scan = nullptr,
                               int threads = 1);
const char* check_zgemm_domain(const kernels::GemmArgs<std::complex<double>>& args, DomainScan* scan = nullptr,
                               int threads = 1);

// The rules above on precomputed summaries (pure; what check_*_domain apply after the scan).
const char* check_gemm_scalars(double alpha, double beta);  // rule 1
const char* fp32_domain_rule(const OperandSummary& a, const OperandSummary& b, int k);
const char* fp64_domain_rule(const OperandSummary& a, const OperandSummary& b);

}  // namespace amxblas

// Numeric-domain rules: can the BF16 component-product method represent this call's inputs
// exactly as the paper assumes? Each rule returns nullptr when the call is in the domain, else
// the forward reason (policy/reasons.h). The rules judge what the kernels' scan of op(A) and
// op(B) found (kernels/common/operand_summary.h); the policy reads no matrix itself. The first
// failing rule, in the order listed, is the reason.
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
// scaling, each slice stored normalised; kernels/pack/pack.h, kernels/isa/split.h): every nonzero
// normalised slice entry lies in [2^-8, 1], every FP32 panel sum of a product of two slices is
// an exact multiple of 2^-16 of magnitude <= 2^8, and the scalings are powers of two applied
// in FP64. No finite input can leave the BF16 or FP32 range, so the only rules are:
//   1. alpha and beta finite                                   else domain:nonfinite-scalar
//   2. every entry finite                                       else domain:nonfinite
// (Before the scaling, the FP64 rules also forwarded subnormal, too-large and slice-subnormal
// inputs, and inputs whose slice products could overflow or underflow FP32: all gone.)
#pragma once

#include <complex>
#include <type_traits>

#include "kernels/common/gemm_types.h"
#include "kernels/common/operand_summary.h"

namespace amxblas {

using kernels::OperandScans;
using kernels::OperandSummary;

inline constexpr double kFp32MinInput = 0x1p-103;     // 2^(-126 + 23)

// The rules on the facts a scan returned (kernels/scan/operand_scan.h); pure.
const char* check_gemm_scalars(double alpha, double beta);  // rule 1
const char* fp32_domain_rule(const OperandSummary& a, const OperandSummary& b, int k);
const char* fp64_domain_rule(const OperandSummary& a, const OperandSummary& b);

// Whether a call of element type T needs a scan of its own before the kernels run. FP64's only
// rule on the operands is rule 2, every entry finite, and the kernels' FP64 split checks exactly
// that as it reads op(A) and op(B) for their exponents, reporting domain:nonfinite before any
// other reason of its own (kernels/bf16/emulated_gemm.h): so a DGEMM or ZGEMM reads its
// operands once, for the domain facts and the exponents together. FP32's rules need the
// magnitudes of a scan first.
template <typename T>
constexpr bool domain_needs_scan() {
    return std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>;
}

// Rule 1 for a call's scalars (a complex scalar: both parts). Decided before any matrix is read.
const char* check_scalars(float alpha, float beta);
const char* check_scalars(double alpha, double beta);
const char* check_scalars(std::complex<float> alpha, std::complex<float> beta);
const char* check_scalars(std::complex<double> alpha, std::complex<double> beta);

// The precision's rules 2 onwards on the scans of op(A) and op(B); T is the GEMM's element type
// (a complex call's real GEMM is 2K deep). nullptr: the call is in the domain.
const char* domain_rule(const OperandScans& s, int k, float*);
const char* domain_rule(const OperandScans& s, int k, double*);
const char* domain_rule(const OperandScans& s, int k, std::complex<float>*);
const char* domain_rule(const OperandScans& s, int k, std::complex<double>*);
template <typename T>
const char* domain_rule(const OperandScans& s, int k) {
    return domain_rule(s, k, static_cast<T*>(nullptr));
}

}  // namespace amxblas

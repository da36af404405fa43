// The domain rules of domain.h.
#include "policy/domain.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "policy/reasons.h"

namespace amxblas {

namespace {

// The depth 2K of the real GEMM a complex one becomes. The FP32 rule uses K only through
// max|A| * max|B| * K, so the clamp at INT_MAX changes no decision that matters (such a call
// cannot be allocated; the kernels forward it).
int complex_depth(int k) { return static_cast<int>(std::min<long>(2L * k, INT_MAX)); }

}  // namespace

const char* check_gemm_scalars(double alpha, double beta) {
    if (!std::isfinite(alpha) || !std::isfinite(beta)) return reason::domain_nonfinite_scalar;
    return nullptr;
}

const char* fp32_domain_rule(const OperandSummary& a, const OperandSummary& b, int k) {
    if (a.nonfinite || b.nonfinite) return reason::domain_nonfinite;
    for (const OperandSummary* s : {&a, &b})
        if (!s->all_zero() && s->min_abs < kFp32MinInput) return reason::domain_too_small;
    if (a.all_zero() || b.all_zero()) return nullptr;  // every product is zero
    const double bound = a.max_abs * b.max_abs;        // exact or +Inf: both are FP32 values
    if (bound * std::max(k, 1) > 0x1p127) return reason::domain_overflow_risk;
    if (bound < 0x1p-102) return reason::domain_underflow_risk;
    return nullptr;
}

const char* fp64_domain_rule(const OperandSummary& a, const OperandSummary& b) {
    if (a.nonfinite || b.nonfinite) return reason::domain_nonfinite;
    return nullptr;
}

const char* check_scalars(float alpha, float beta) { return check_gemm_scalars(alpha, beta); }
const char* check_scalars(double alpha, double beta) { return check_gemm_scalars(alpha, beta); }
const char* check_scalars(std::complex<float> alpha, std::complex<float> beta) {
    if (const char* why = check_gemm_scalars(alpha.real(), alpha.imag())) return why;
    return check_gemm_scalars(beta.real(), beta.imag());
}
const char* check_scalars(std::complex<double> alpha, std::complex<double> beta) {
    if (const char* why = check_gemm_scalars(alpha.real(), alpha.imag())) return why;
    return check_gemm_scalars(beta.real(), beta.imag());
}

// op(A) alone decides a nonfinite entry (the scan then left op(B) unread).
const char* domain_rule(const OperandScans& s, int k, float*) { return fp32_domain_rule(s.a, s.b, k); }
const char* domain_rule(const OperandScans& s, int, double*) { return fp64_domain_rule(s.a, s.b); }
const char* domain_rule(const OperandScans& s, int k, std::complex<float>*) {
    return fp32_domain_rule(s.a, s.b, complex_depth(k));
}
const char* domain_rule(const OperandScans& s, int, std::complex<double>*) { return fp64_domain_rule(s.a, s.b); }

}  // namespace amxblas

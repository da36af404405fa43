// The domain rules of domain.h.
#include "policy/domain.h"

#include <algorithm>
#include <climits>
#include <cmath>

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

const char* check_sgemm_domain(const kernels::GemmArgs<float>& g, DomainScan* scan, int threads) {
    if (const char* why = check_gemm_scalars(g.alpha, g.beta)) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp32_operand(g.transa, g.m, g.k, g.a, g.lda, threads);
    if (s.a.nonfinite) return reason::domain_nonfinite;  // no need to read B
    s.b = scan_fp32_operand(g.transb, g.k, g.n, g.b, g.ldb, threads);
    return fp32_domain_rule(s.a, s.b, g.k);
}

const char* check_dgemm_domain(const kernels::GemmArgs<double>& g, DomainScan* scan, int threads) {
    if (const char* why = check_gemm_scalars(g.alpha, g.beta)) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp64_operand(g.transa, g.m, g.k, g.a, g.lda, threads);
    if (s.a.nonfinite) return reason::domain_nonfinite;
    s.b = scan_fp64_operand(g.transb, g.k, g.n, g.b, g.ldb, threads);
    return fp64_domain_rule(s.a, s.b);
}

const char* check_cgemm_domain(const kernels::GemmArgs<std::complex<float>>& g, DomainScan* scan, int threads) {
    if (const char* why = check_gemm_scalars(g.alpha.real(), g.alpha.imag())) return why;
    if (const char* why = check_gemm_scalars(g.beta.real(), g.beta.imag())) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp32_complex_operand(g.transa, g.m, g.k, reinterpret_cast<const float*>(g.a), g.lda, threads);
    if (s.a.nonfinite) return reason::domain_nonfinite;
    s.b = scan_fp32_complex_operand(g.transb, g.k, g.n, reinterpret_cast<const float*>(g.b), g.ldb, threads);
    return fp32_domain_rule(s.a, s.b, complex_depth(g.k));
}

const char* check_zgemm_domain(const kernels::GemmArgs<std::complex<double>>& g, DomainScan* scan,
                               int threads) {
    if (const char* why = check_gemm_scalars(g.alpha.real(), g.alpha.imag())) return why;
    if (const char* why = check_gemm_scalars(g.beta.real(), g.beta.imag())) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp64_complex_operand(g.transa, g.m, g.k, reinterpret_cast<const double*>(g.a), g.lda, threads);
    if (s.a.nonfinite) return reason::domain_nonfinite;
    s.b = scan_fp64_complex_operand(g.transb, g.k, g.n, reinterpret_cast<const double*>(g.b), g.ldb, threads);
    return fp64_domain_rule(s.a, s.b);
}

}  // namespace amxblas

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

namespace {

// Rule 1 on alpha and beta (both parts of complex ones).
template <typename R>
const char* check_scalars(R alpha, R beta) {
    return check_gemm_scalars(alpha, beta);
}
template <typename R>
const char* check_scalars(std::complex<R> alpha, std::complex<R> beta) {
    if (const char* why = check_gemm_scalars(alpha.real(), alpha.imag())) return why;
    return check_gemm_scalars(beta.real(), beta.imag());
}

OperandSummary scan_operand(char trans, int rows, int cols, const float* x, std::int64_t ld, int threads) {
    return scan_fp32_operand(trans, rows, cols, x, ld, threads);
}
OperandSummary scan_operand(char trans, int rows, int cols, const double* x, std::int64_t ld, int threads) {
    return scan_fp64_operand(trans, rows, cols, x, ld, threads);
}
OperandSummary scan_operand(char trans, int rows, int cols, const std::complex<float>* x, std::int64_t ld,
                            int threads) {
    return scan_fp32_complex_operand(trans, rows, cols, reinterpret_cast<const float*>(x), ld, threads);
}
OperandSummary scan_operand(char trans, int rows, int cols, const std::complex<double>* x, std::int64_t ld,
                            int threads) {
    return scan_fp64_complex_operand(trans, rows, cols, reinterpret_cast<const double*>(x), ld, threads);
}

// The precision's rule; a complex call's real GEMM is 2K deep.
template <typename T>
const char* domain_rule(const OperandSummary& a, const OperandSummary& b, int k) {
    if constexpr (std::is_same_v<T, float>) return fp32_domain_rule(a, b, k);
    else if constexpr (std::is_same_v<T, std::complex<float>>) return fp32_domain_rule(a, b, complex_depth(k));
    else return fp64_domain_rule(a, b);
}

// Every precision's check: the scalars, op(A), then op(B) only if op(A) left the call open.
template <typename T>
const char* check_domain(const kernels::GemmArgs<T>& g, DomainScan* scan, int threads) {
    if (const char* why = check_scalars(g.alpha, g.beta)) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_operand(g.transa, g.m, g.k, g.a, g.lda, threads);
    if (s.a.nonfinite) return reason::domain_nonfinite;  // no need to read B
    s.b = scan_operand(g.transb, g.k, g.n, g.b, g.ldb, threads);
    return domain_rule<T>(s.a, s.b, g.k);
}

}  // namespace

const char* check_sgemm_domain(const kernels::GemmArgs<float>& g, DomainScan* scan, int threads) {
    return check_domain(g, scan, threads);
}

const char* check_dgemm_domain(const kernels::GemmArgs<double>& g, DomainScan* scan, int threads) {
    return check_domain(g, scan, threads);
}

const char* check_cgemm_domain(const kernels::GemmArgs<std::complex<float>>& g, DomainScan* scan, int threads) {
    return check_domain(g, scan, threads);
}

const char* check_zgemm_domain(const kernels::GemmArgs<std::complex<double>>& g, DomainScan* scan, int threads) {
    return check_domain(g, scan, threads);
}

}  // namespace amxblas

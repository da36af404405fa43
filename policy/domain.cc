// The domain rules of domain.h. Proofs of the facts (a)-(d) used by the FP64 rules:
//
// (a) With sigma = 0.75 * 2^(v+45) = 1.5 * 2^(v+44) and |x| <= 2^v, x + sigma lies in
//     [1.5 * 2^(v+44) - 2^v, 1.5 * 2^(v+44) + 2^v], inside [2^(v+44), 2^(v+45)), where the
//     FP64 spacing is 2^(v-8) whatever the sign of x. The subtraction of sigma is exact
//     (Sterbenz), so Z is the residual rounded to nearest on the 2^(v-8) grid, and |Z| <= 2^v.
//     A multiple of 2^(v-8) below 2^v in magnitude is an integer below 2^8 times 2^(v-8): at
//     most 8 significant bits, and 2^v itself has one.
// (b) Rounding to nearest on that grid leaves |x - Z| <= 2^(v-9), hence v(r+1) <= v(r) - 9.
// (c) Let x be a multiple of 2^Lx. Rounding a multiple of 2^Lx to a grid 2^g >= 2^Lx gives a
//     multiple of 2^g, hence of 2^Lx; to a finer grid it gives the residual itself. So Z and
//     the new residual are multiples of 2^Lx, and by induction every slice of x is. A nonzero
//     residual is then >= 2^L, so v(r) >= L when slice r is nonzero, and with (b)
//     L <= v(r) <= v(0) - 9r.
// (d) Slice entries of A_i are multiples of g_A(i) = 2^(v_A(i)-8) by (a); a product of
//     entries of A_i and B_j is a multiple of g_A(i) g_B(j) and at most 2^(v_A(i)+v_B(j)) in
//     magnitude. A sum of n <= 256 such terms is at most 2^(v_A(i)+v_B(j)+8) = 2^24 g_A g_B,
//     an integer multiple of g_A g_B below 2^24 (or exactly 2^24): exactly representable in
//     FP32 whenever g_A g_B >= 2^-126 and the bound is below FLT_MAX. With (c), the entries
//     of slice r are multiples of both 2^(v(r)-8) and 2^L, hence of 2^max(v(r)-8, L).
#include "policy/domain.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "kernels/variants.h"
#include "policy/reasons.h"

namespace amxblas {

namespace {

// ceil(log2(n)) for n >= 1.
int ceil_log2(int n) {
    int e = 0;
    while ((1L << e) < n) ++e;
    return e;
}

int panel_terms_log2(int k) { return ceil_log2(std::max(1, std::min(k, kPanelK))); }

// Index of the last slice of an operand that can be nonzero, by fact (c).
int last_possible_slice(const OperandSummary& s) {
    return std::min(5, (s.max_exponent() - s.lowbit_exponent()) / 9);
}

// The depth 2K of the real GEMM a complex one becomes. The rules use K only through
// min(K, 256) and max|A| * max|B| * K, so the clamp at INT_MAX changes no decision that
// matters (such a call cannot be allocated; the kernels forward it).
int complex_depth(int k) { return static_cast<int>(std::min<long>(2L * k, INT_MAX)); }

}  // namespace

int fp64_schedule_depth(int products) {
    const kernels::Variant* v = kernels::fp64_variant(products);
    return v ? v->depth : 0;
}

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

const char* fp64_domain_rule(const OperandSummary& a, const OperandSummary& b, int products,
                             int k) {
    if (a.nonfinite || b.nonfinite) return reason::domain_nonfinite;
    for (const OperandSummary* s : {&a, &b})
        if (!s->all_zero() && s->min_abs < kBf16MinNormal) return reason::domain_subnormal;
    for (const OperandSummary* s : {&a, &b})
        if (s->max_abs > kBf16MaxFinite) return reason::domain_too_large;
    for (const OperandSummary* s : {&a, &b})
        if (!s->all_zero() && s->min_lowbit < kBf16MinNormal) return reason::domain_slice_subnormal;
    if (a.all_zero() || b.all_zero()) return nullptr;  // every slice product is zero

    const int va = a.max_exponent(), vb = b.max_exponent();
    if (va + vb + panel_terms_log2(k) > 127) return reason::domain_overflow_risk;

    const int la = a.lowbit_exponent(), lb = b.lowbit_exponent();
    if (la + lb >= -126) return nullptr;
    // Slice r's entries are multiples of 2^max(v(r) - 8, L) (facts (a), (c)), and v(r) is at
    // most v(0) - 9r (fact (b)): the coarsest granularity product (i, j) can have.
    const int depth = std::max(1, fp64_schedule_depth(products));
    for (int i = 0; i <= last_possible_slice(a); ++i)
        for (int j = 0; j <= last_possible_slice(b) && i + j < depth; ++j)
            if (std::max(va - 9 * i - 8, la) + std::max(vb - 9 * j - 8, lb) < -126)
                return reason::domain_underflow_risk;
    return nullptr;
}

const char* check_fp64_slice_exponents(const SliceExponents& a, const SliceExponents& b,
                                       int products, int k) {
    const int depth = fp64_schedule_depth(products);
    const int terms = panel_terms_log2(k);
    for (int i = 0; i < std::min(a.active, 6); ++i)
        for (int j = 0; j < std::min(b.active, 6) && i + j < depth; ++j)
            if (a.v[i] + b.v[j] + terms > 127) return reason::domain_overflow_risk;
    for (int i = 0; i < std::min(a.active, 6); ++i)
        for (int j = 0; j < std::min(b.active, 6) && i + j < depth; ++j)
            if (a.v[i] + b.v[j] - 16 < -126) return reason::domain_underflow_risk;
    return nullptr;
}

const char* check_sgemm_domain(const kernels::GemmArgs<float>& g, DomainScan* scan) {
    if (const char* why = check_gemm_scalars(g.alpha, g.beta)) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp32_operand(g.transa, g.m, g.k, g.a, g.lda);
    if (s.a.nonfinite) return reason::domain_nonfinite;  // no need to read B
    s.b = scan_fp32_operand(g.transb, g.k, g.n, g.b, g.ldb);
    return fp32_domain_rule(s.a, s.b, g.k);
}

const char* check_dgemm_domain(const kernels::GemmArgs<double>& g, int products,
                               DomainScan* scan) {
    if (const char* why = check_gemm_scalars(g.alpha, g.beta)) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp64_operand(g.transa, g.m, g.k, g.a, g.lda);
    if (s.a.nonfinite) return reason::domain_nonfinite;
    s.b = scan_fp64_operand(g.transb, g.k, g.n, g.b, g.ldb);
    return fp64_domain_rule(s.a, s.b, products, g.k);
}

const char* check_cgemm_domain(const kernels::GemmArgs<std::complex<float>>& g, DomainScan* scan) {
    if (const char* why = check_gemm_scalars(g.alpha.real(), g.alpha.imag())) return why;
    if (const char* why = check_gemm_scalars(g.beta.real(), g.beta.imag())) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp32_complex_operand(g.transa, g.m, g.k, reinterpret_cast<const float*>(g.a), g.lda);
    if (s.a.nonfinite) return reason::domain_nonfinite;
    s.b = scan_fp32_complex_operand(g.transb, g.k, g.n, reinterpret_cast<const float*>(g.b), g.ldb);
    return fp32_domain_rule(s.a, s.b, complex_depth(g.k));
}

const char* check_zgemm_domain(const kernels::GemmArgs<std::complex<double>>& g, int products,
                               DomainScan* scan) {
    if (const char* why = check_gemm_scalars(g.alpha.real(), g.alpha.imag())) return why;
    if (const char* why = check_gemm_scalars(g.beta.real(), g.beta.imag())) return why;
    DomainScan local;
    DomainScan& s = scan ? *scan : local;
    s.a = scan_fp64_complex_operand(g.transa, g.m, g.k, reinterpret_cast<const double*>(g.a), g.lda);
    if (s.a.nonfinite) return reason::domain_nonfinite;
    s.b = scan_fp64_complex_operand(g.transb, g.k, g.n, reinterpret_cast<const double*>(g.b), g.ldb);
    return fp64_domain_rule(s.a, s.b, products, complex_depth(g.k));
}

}  // namespace amxblas

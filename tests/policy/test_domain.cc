// The domain rules of policy/domain.h at their boundaries, the scan (portable and AVX-512
// agree), and the facts the FP64 rules rest on, checked against a model of the kernels' split.
#include <complex>  // before cmocka.h, whose fail() macro breaks <complex>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/variants.h"
#include "policy/domain.h"
#include "policy/reasons.h"

using namespace amxblas;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An n x n DGEMM (column-major, lda = ldb = n) of ones with some entries replaced.
struct Dgemm {
    int n;
    std::vector<double> a, b, c;
    double alpha = 1, beta = 0;
    explicit Dgemm(int n_, double fill_a = 1, double fill_b = 1)
        : n(n_), a(n_ * n_, fill_a), b(n_ * n_, fill_b), c(n_ * n_, 0) {}
    const char* reason(int products = 21) const {
        const kernels::GemmArgs<double> g{'N', 'N', n, n, n, alpha, a.data(), n,
                                          b.data(), n, beta, const_cast<double*>(c.data()), n};
        return check_dgemm_domain(g, products);
    }
};

struct Sgemm {
    int n;
    std::vector<float> a, b, c;
    float alpha = 1, beta = 0;
    explicit Sgemm(int n_, float fill_a = 1, float fill_b = 1)
        : n(n_), a(n_ * n_, fill_a), b(n_ * n_, fill_b), c(n_ * n_, 0) {}
    const char* reason() const {
        const kernels::GemmArgs<float> g{'N', 'N', n, n, n, alpha, a.data(), n,
                                         b.data(), n, beta, const_cast<float*>(c.data()), n};
        return check_sgemm_domain(g);
    }
};

void assert_reason(const char* got, const char* want) {
    if (want == nullptr) {
        if (got) fail_msg("expected in domain, got %s", got);
    } else {
        if (!got) fail_msg("expected %s, got in domain", want);
        assert_string_equal(got, want);
    }
}

// --- FP64 rules, boundary values. ----------------------------------------------------------

void fp64_in_domain(void**) {
    Dgemm d(8);
    assert_reason(d.reason(), nullptr);
    d.a[3] = -0.0;
    d.b[5] = 0.0;
    assert_reason(d.reason(), nullptr);
    Dgemm zeros(8, 0.0, 0.0);
    assert_reason(zeros.reason(), nullptr);
    Dgemm a_zero(8, 0.0, 1.0);
    assert_reason(a_zero.reason(), nullptr);
}

void fp64_nonfinite(void**) {
    for (double bad : {kNaN, -kNaN, kInf, -kInf}) {
        Dgemm d(8);
        d.a[9] = bad;
        assert_reason(d.reason(), reason::domain_nonfinite);
        Dgemm e(8, 0.0, 1.0);  // a zero A does not hide a NaN in B: 0 * NaN = NaN
        e.b[63] = bad;
        assert_reason(e.reason(), reason::domain_nonfinite);
    }
}

void fp64_nonfinite_scalars(void**) {
    for (double bad : {kNaN, kInf, -kInf}) {
        Dgemm d(8);
        d.alpha = bad;
        assert_reason(d.reason(), reason::domain_nonfinite_scalar);
        d.alpha = 1;
        d.beta = bad;
        assert_reason(d.reason(), reason::domain_nonfinite_scalar);
    }
    assert_reason(check_gemm_scalars(-0.0, 0.0), nullptr);
    assert_reason(check_gemm_scalars(DBL_MAX, -DBL_MAX), nullptr);
}

void fp64_lower_bound(void**) {
    Dgemm d(8);
    d.a[1] = 0x1p-126;  // the smallest magnitude of Eq. (2), and a power of two
    assert_reason(d.reason(), nullptr);
    d.a[1] = -0x1p-126;
    assert_reason(d.reason(), nullptr);
    d.a[1] = std::nextafter(0x1p-126, 0.0);  // a normal FP64 value just below
    assert_reason(d.reason(), reason::domain_subnormal);
    d.a[1] = 0x1p-127;
    assert_reason(d.reason(), reason::domain_subnormal);
    d.a[1] = std::numeric_limits<double>::denorm_min();  // an FP64 subnormal
    assert_reason(d.reason(), reason::domain_subnormal);
    d.a[1] = 1.0;
    d.b[7] = -1e-300;
    assert_reason(d.reason(), reason::domain_subnormal);
}

void fp64_upper_bound(void**) {
    // A = one large entry, B = 2^-20 everywhere: the product bound stays small.
    Dgemm d(8, 1.0, 0x1p-20);
    d.a[0] = std::nextafter(kBf16MaxFinite, kInf);
    assert_reason(d.reason(), reason::domain_too_large);
    d.a[0] = DBL_MAX;
    assert_reason(d.reason(), reason::domain_too_large);
    // (2 - 2^-7) * 2^127 = 255 * 2^120 is in Eq. (2) and on its own 2^(v-8) = 2^120 grid:
    // the first slice holds it exactly, for either sign.
    d.a[0] = kBf16MaxFinite;
    assert_reason(d.reason(), nullptr);
    d.a[0] = -kBf16MaxFinite;
    assert_reason(d.reason(), nullptr);
    d.a[0] = std::nextafter(kBf16MaxFinite, 0.0);  // v(0) = 128: fine with B this small
    assert_reason(d.reason(), nullptr);
}

void fp64_slice_subnormal(void**) {
    // 2^-100 + 2^-140: in Eq. (2), but its third slice is 2^-140. The slices do not stay
    // within 8 * 6 bits of v(0) = 0: after slice 0 the residual max drops to 2^-99.
    Dgemm d(8);
    d.a[17] = 0x1p-100 + 0x1p-140;
    assert_reason(d.reason(), reason::domain_slice_subnormal);
    d.a[17] = 0x1p-100 + 0x1p-126;  // lowest bit exactly 2^-126
    assert_reason(d.reason(), nullptr);
    d.a[17] = 0x1p-100 + 0x1p-127;
    assert_reason(d.reason(), reason::domain_slice_subnormal);
    // Any value >= 2^-74 has its lowest bit at or above 2^-126.
    d.a[17] = std::nextafter(0x1p-74, 1.0);
    assert_reason(d.reason(), nullptr);
    d.a[17] = std::nextafter(0x1p-74, 0.0);
    assert_reason(d.reason(), reason::domain_slice_subnormal);
}

void fp64_overflow(void**) {
    // v_A(0) + v_B(0) + ceil(log2 min(K, 256)) <= 127. K = 8: 3 bits.
    Dgemm d(8, 0x1p100, 0x1p24);  // 100 + 24 + 3 = 127
    assert_reason(d.reason(), nullptr);
    d.b[0] = 0x1p25;  // 128
    assert_reason(d.reason(), reason::domain_overflow_risk);
    d.b[0] = 0x1.8p24;  // v = ceil(log2 1.5 * 2^24) = 25
    assert_reason(d.reason(), reason::domain_overflow_risk);
    // Panels have at most 256 terms however large K is.
    OperandSummary a, b;
    a.max_abs = b.max_abs = 0x1p56;
    a.min_abs = b.min_abs = a.min_lowbit = b.min_lowbit = 1.0;
    assert_reason(fp64_domain_rule(a, b, 21, 100000), nullptr);  // 56 + 56 + 8 = 120
    b.max_abs = 0x1p63;
    assert_reason(fp64_domain_rule(a, b, 21, 100000), nullptr);  // 127
    b.max_abs = 0x1p64;
    assert_reason(fp64_domain_rule(a, b, 21, 100000), reason::domain_overflow_risk);
    assert_reason(fp64_domain_rule(a, b, 21, 2), nullptr);  // 56 + 64 + 1
}

void fp64_underflow(void**) {
    // Full 53-bit entries in [2^-50, 2^-49): v(0) = -49, lowest bits near 2^-101.
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(1.0, 2.0);
    Dgemm d(8);
    for (double& x : d.a) x = std::ldexp(u(rng), -50);
    for (double& x : d.b) x = std::ldexp(u(rng), -50);
    // Deepest retained pair i + j = d - 1; -98 - 9(d-1) - 16 < -126 for every d >= 3.
    for (const kernels::Variant& v : kernels::kVariants)
        if (v.precision == kernels::Precision::fp64 && v.depth >= 3)
            assert_reason(d.reason(v.products), reason::domain_underflow_risk);
    // B in [2^-30, 2^-29): -49 - 29 - 16 - 9(d-1) >= -126 iff d - 1 <= 3.
    for (double& x : d.b) x = std::ldexp(u(rng), -30);
    assert_reason(d.reason(6), nullptr);
    assert_reason(d.reason(10), nullptr);
    assert_reason(d.reason(15), reason::domain_underflow_risk);
    assert_reason(d.reason(21), reason::domain_underflow_risk);
    // The rigorous pass: lowest bits L_A + L_B >= -126 (short integers times powers of two).
    Dgemm e(8, 3 * 0x1p-60, 5 * 0x1p-60);
    assert_reason(e.reason(21), nullptr);
    Dgemm f(8, 0x1p-63, 0x1p-63);
    assert_reason(f.reason(21), nullptr);
    // L_B = -64, v_B = -62, one slice each: granularity 2^(-63 - 64) can appear in a partial
    // sum of terms of mixed signs.
    f.b[0] = 0x1p-64 * 3;
    assert_reason(f.reason(21), reason::domain_underflow_risk);
}

void fp64_underflow_lowbit_caps_grid(void**) {
    // A: v = -40 and L = -45 (entries of at most 6 bits: one slice, multiples of 2^-45).
    // B: v = -55, L = -120. For 6 products the deepest pair is (0, 2):
    // max(-48, -45) + max(-81, -120) = -126 passes, though v_A - 8 + v_B - 26 = -129 alone
    // would not; for 10 products (0, 3) gives -45 - 90 = -135.
    OperandSummary a, b;
    a.max_abs = 0x1p-40;
    a.min_abs = a.min_lowbit = 0x1p-45;
    b.max_abs = 0x1p-55;
    b.min_abs = 0x1p-100;
    b.min_lowbit = 0x1p-120;
    assert_reason(fp64_domain_rule(a, b, 6, 512), nullptr);
    assert_reason(fp64_domain_rule(a, b, 10, 512), reason::domain_underflow_risk);
}

void fp64_rule_order(void**) {
    Dgemm d(8);
    d.a[0] = kNaN;
    d.a[1] = 1e-300;
    d.a[2] = 1e300;
    d.alpha = kInf;
    assert_reason(d.reason(), reason::domain_nonfinite_scalar);
    d.alpha = 1;
    assert_reason(d.reason(), reason::domain_nonfinite);
    d.a[0] = 1;
    assert_reason(d.reason(), reason::domain_subnormal);
    d.a[1] = 1;
    assert_reason(d.reason(), reason::domain_too_large);
}

void fp64_transposes_and_padding(void**) {
    // op(A) is 4 x 6 stored as 6 x 4 (trans 'T'), lda = 8 with NaN padding that must not be read.
    const int m = 4, n = 5, k = 6, lda = 8, ldb = 9;
    std::vector<double> a(lda * m, kNaN), b(ldb * n, kNaN), c(m * n, 0);
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < k; ++i) a[i + j * lda] = 1.5;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < k; ++i) b[i + j * ldb] = -2.0;
    kernels::GemmArgs<double> g{'t', 'N', m, n, k, 1.0, a.data(), lda, b.data(), ldb,
                                0.0, c.data(), m};
    DomainScan scan;
    assert_reason(check_dgemm_domain(g, 21, &scan), nullptr);
    assert_true(scan.a.max_abs == 1.5);
    assert_true(scan.b.max_abs == 2.0);
    assert_int_equal(scan.a.max_exponent(), 1);
    a[k - 1 + (m - 1) * lda] = kNaN;  // the last entry of op(A)
    assert_reason(check_dgemm_domain(g, 21), reason::domain_nonfinite);
}

void slice_exponents_rule(void**) {
    SliceExponents a, b;
    a.active = b.active = 6;
    for (int r = 0; r < 6; ++r) a.v[r] = b.v[r] = -8 * r;
    assert_reason(check_fp64_slice_exponents(a, b, 21, 1024), nullptr);
    a.v[0] = 60;
    b.v[0] = 60;  // 60 + 60 + 8 = 128
    assert_reason(check_fp64_slice_exponents(a, b, 21, 1024), reason::domain_overflow_risk);
    assert_reason(check_fp64_slice_exponents(a, b, 21, 128), nullptr);  // 60 + 60 + 7
    for (int r = 0; r < 6; ++r) a.v[r] = b.v[r] = -40 - 8 * r;
    // (i, j) = (0, 0): -80 - 16 = -96; i + j = 2: -112; 3: -120; 4: -128.
    assert_reason(check_fp64_slice_exponents(a, b, 10, 1024), nullptr);
    assert_reason(check_fp64_slice_exponents(a, b, 15, 1024), reason::domain_underflow_risk);
    b.active = 1;  // only B_0: the deepest retained pair is (4, 0) for 15 products
    assert_reason(check_fp64_slice_exponents(a, b, 15, 1024), reason::domain_underflow_risk);
    a.active = 4;
    assert_reason(check_fp64_slice_exponents(a, b, 15, 1024), nullptr);
    assert_int_equal(fp64_schedule_depth(6), 3);
    assert_int_equal(fp64_schedule_depth(21), 6);
    assert_int_equal(fp64_schedule_depth(7), 0);
}

// --- FP32 rules. ----------------------------------------------------------------------------

void fp32_rules(void**) {
    Sgemm s(8);
    assert_reason(s.reason(), nullptr);
    s.a[2] = 0x1p-103f;
    assert_reason(s.reason(), nullptr);
    s.a[2] = std::nextafter(0x1p-103f, 0.0f);
    assert_reason(s.reason(), reason::domain_too_small);
    s.a[2] = std::numeric_limits<float>::denorm_min();
    assert_reason(s.reason(), reason::domain_too_small);
    s.a[2] = -0.0f;
    assert_reason(s.reason(), nullptr);
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
        Sgemm t(8);
        t.b[63] = bad;
        assert_reason(t.reason(), reason::domain_nonfinite);
        t.b[63] = 1;
        t.beta = bad;
        assert_reason(t.reason(), reason::domain_nonfinite_scalar);
    }
    Sgemm zeros(8, 0.0f, 0.0f);
    assert_reason(zeros.reason(), nullptr);
    // Overflow: max|A| max|B| K <= 2^127; K = 8.
    Sgemm big(8, 0x1p62f, 0x1p62f);  // 2^127
    assert_reason(big.reason(), nullptr);
    big.b[0] = std::nextafter(0x1p62f, 1e30f);
    assert_reason(big.reason(), reason::domain_overflow_risk);
    big.b[0] = FLT_MAX;
    assert_reason(big.reason(), reason::domain_overflow_risk);
    // Underflow: max|A| max|B| >= 2^-102.
    Sgemm tiny(8, 0x1p-51f, 0x1p-51f);
    assert_reason(tiny.reason(), nullptr);
    tiny.b.assign(64, std::nextafter(0x1p-51f, 0.0f));
    assert_reason(tiny.reason(), reason::domain_underflow_risk);
}

// --- The scan: both implementations agree. ---------------------------------------------------

std::vector<double> assorted_doubles(std::mt19937_64& rng, int n) {
    const double specials[] = {0.0, -0.0, 1.0, -1.0, 0x1p-126, -0x1p-127, 1e-310, -4.9e-324,
                               kBf16MaxFinite, DBL_MAX, 0x1p-100 + 0x1p-140, 3.0, 0.1};
    std::uniform_real_distribution<double> u(-1, 1);
    std::uniform_int_distribution<int> e(-200, 200), pick(0, 15);
    std::vector<double> v(n);
    for (double& x : v) {
        const int p = pick(rng);
        x = p < 13 ? specials[p] : std::ldexp(u(rng), e(rng));
    }
    return v;
}

void same_summary(const OperandSummary& p, const OperandSummary& q) {
    assert_int_equal(p.nonfinite, q.nonfinite);
    assert_memory_equal(&p.max_abs, &q.max_abs, sizeof(double));
    assert_memory_equal(&p.min_abs, &q.min_abs, sizeof(double));
    assert_memory_equal(&p.min_lowbit, &q.min_lowbit, sizeof(double));
}

void scan_implementations_agree(void**) {
    if (!scan_avx512_available()) skip();
    std::mt19937_64 rng(11);
    for (int len = 0; len <= 40; ++len) {
        for (int rep = 0; rep < 20; ++rep) {
            std::vector<double> v = assorted_doubles(rng, len + 3);
            if (rep % 5 == 1 && len > 0) v[rep % len] = kNaN;
            if (rep % 5 == 2 && len > 0) v[len - 1] = -kInf;
            // Strided: rows = len / 3 + 1 of a column-major matrix with ld = rows + 2.
            const int rows = len / 3 + 1, cols = (len + 3) / (rows + 2);
            same_summary(scan_fp64_with(ScanImpl::portable, v.data(), len, 1, len),
                         scan_fp64_with(ScanImpl::avx512, v.data(), len, 1, len));
            same_summary(scan_fp64_with(ScanImpl::portable, v.data(), rows, cols, rows + 2),
                         scan_fp64_with(ScanImpl::avx512, v.data(), rows, cols, rows + 2));
            std::vector<float> f(v.begin(), v.end());
            same_summary(scan_fp32_with(ScanImpl::portable, f.data(), len, 1, len),
                         scan_fp32_with(ScanImpl::avx512, f.data(), len, 1, len));
            same_summary(scan_fp32_with(ScanImpl::portable, f.data(), rows, cols, rows + 2),
                         scan_fp32_with(ScanImpl::avx512, f.data(), rows, cols, rows + 2));
        }
    }
}

void scan_values(void**) {
    for (ScanImpl impl : {ScanImpl::portable, ScanImpl::avx512}) {
        const double v[] = {0.0, -3.0, 0x1p-20 + 0x1p-70, kNaN, 0.5, -0.0};
        const OperandSummary s = scan_fp64_with(impl, v, 6, 1, 6);
        assert_true(s.nonfinite);
        assert_true(s.max_abs == 3.0);
        assert_true(s.min_abs == 0x1p-20 + 0x1p-70);
        assert_true(s.min_lowbit == 0x1p-70);
        assert_int_equal(s.max_exponent(), 2);
        assert_int_equal(s.lowbit_exponent(), -70);
        const OperandSummary z = scan_fp64_with(impl, v, 1, 1, 1);
        assert_true(z.all_zero());
        assert_true(z.min_abs == 0 && z.min_lowbit == 0 && !z.nonfinite);
        const OperandSummary empty = scan_fp64_with(impl, v, 0, 5, 1);
        assert_true(empty.all_zero());
        const float f[] = {0.25f, -8.0f, 0.0f};
        const OperandSummary t = scan_fp32_with(impl, f, 3, 1, 3);
        assert_true(t.max_abs == 8.0 && t.min_abs == 0.25 && !t.nonfinite);
        assert_int_equal(t.max_exponent(), 3);
    }
}

// --- The facts behind the FP64 rules, against a model of the split. ------------------------

// The six-slice Ozaki split of the kernels (paper Eqs. 13-14) on a list of values.
struct Split {
    int active = 0;
    int v[6] = {};
    std::vector<double> slice[6];
};

Split ozaki_split(const std::vector<double>& x) {
    Split s;
    std::vector<double> r = x;
    for (int t = 0; t < 6; ++t) {
        double mx = 0;
        for (double e : r) mx = std::fmax(mx, std::fabs(e));
        s.slice[t].assign(x.size(), 0.0);
        if (mx == 0) break;
        int e;
        const double f = std::frexp(mx, &e);
        s.v[t] = f == 0.5 ? e - 1 : e;
        const double sigma = std::ldexp(0.75, s.v[t] + 45);
        for (size_t i = 0; i < r.size(); ++i) {
            const double z = (r[i] + sigma) - sigma;
            s.slice[t][i] = z;
            r[i] -= z;
        }
        s.active = t + 1;
    }
    return s;
}

bool is_multiple(double z, int e) {
    const double q = std::ldexp(z, -e);
    return q == std::floor(q);
}

std::vector<double> random_operand(std::mt19937_64& rng, int n, int kind, int scale) {
    std::uniform_real_distribution<double> u(-1, 1);
    std::uniform_int_distribution<int> small(-20, 20), spread(-60, 0);
    std::vector<double> v(n);
    for (double& x : v) {
        switch (kind) {
            case 0: x = std::ldexp(u(rng), scale); break;                  // uniform
            case 1: x = std::ldexp(u(rng), scale + spread(rng)); break;    // log-uniform
            case 2: x = std::ldexp(small(rng), scale); break;              // short integers
            default: x = std::ldexp(u(rng), scale + (spread(rng) < -55 ? -90 : 0)); break;
        }
    }
    return v;
}

// Facts (a)-(c) on many operands, and rule 5's promise: when it passes, every slice is a normal
// BF16 number; rule 7's: when check_fp64_slice_exponents passes, every FP32 panel sum of
// every retained product is exact and never leaves the normal range.
void split_facts(void**) {
    std::mt19937_64 rng(5);
    const int scales[] = {-110, -80, -50, -20, 0, 30, 70, 110};
    const int n = 8, k = 16;
    int checked = 0;  // cases whose products were checked
    for (int kind = 0; kind < 4; ++kind) {
        for (int sa : scales) {
            for (int sb : {-60, 0, 20}) {
                const std::vector<double> a = random_operand(rng, n * k, kind, sa);
                const std::vector<double> b = random_operand(rng, k * n, kind, sb);
                const OperandSummary qa = scan_fp64(a.data(), n, k, n);
                const OperandSummary qb = scan_fp64(b.data(), k, n, k);
                const Split x = ozaki_split(a), y = ozaki_split(b);
                for (const auto& [q, s] : {std::pair{&qa, &x}, std::pair{&qb, &y}}) {
                    if (q->all_zero()) continue;
                    assert_int_equal(s->v[0], q->max_exponent());
                    for (int r = 0; r < s->active; ++r) {
                        if (r > 0) assert_true(s->v[r] <= s->v[r - 1] - 9);      // (b)
                        assert_true(s->v[r] >= q->lowbit_exponent());              // (c)
                        for (double z : s->slice[r]) {
                            assert_true(is_multiple(z, s->v[r] - 8));              // (a)
                            assert_true(std::fabs(z) <= std::ldexp(1.0, s->v[r]));
                            assert_true(z == 0 || std::fabs(z) >= q->min_lowbit);  // (c)
                            if (q->min_lowbit >= kBf16MinNormal && q->min_abs >= kBf16MinNormal)
                                assert_true(z == 0 || std::fabs(z) >= kBf16MinNormal);  // rule 5
                        }
                    }
                    assert_true(s->active <= (q->max_exponent() - q->lowbit_exponent()) / 9 + 1);
                }
                const char* pre = fp64_domain_rule(qa, qb, 21, k);
                if (pre) continue;
                SliceExponents ea, eb;
                ea.active = x.active;
                eb.active = y.active;
                std::memcpy(ea.v, x.v, sizeof ea.v);
                std::memcpy(eb.v, y.v, sizeof eb.v);
                if (check_fp64_slice_exponents(ea, eb, 21, k)) continue;
                ++checked;
                // Every retained product: FP32 partial sums equal the exact ones, all normal.
                for (int i = 0; i < x.active; ++i)
                    for (int j = 0; j < y.active && i + j < 6; ++j)
                        for (int row = 0; row < n; ++row)
                            for (int col = 0; col < n; ++col) {
                                float f = 0;
                                double exact = 0;
                                for (int t = 0; t < k; ++t) {
                                    const double p = x.slice[i][row + t * n] * y.slice[j][t + col * k];
                                    f += static_cast<float>(p);
                                    exact += p;
                                    assert_true(p == static_cast<float>(p));
                                    assert_true(f == exact);
                                    assert_true(f == 0 || std::fabs(f) >= FLT_MIN);
                                    assert_true(p == 0 || std::fabs(p) >= FLT_MIN);
                                }
                            }
            }
        }
    }
    assert_true(checked >= 20);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fp64_in_domain),
        cmocka_unit_test(fp64_nonfinite),
        cmocka_unit_test(fp64_nonfinite_scalars),
        cmocka_unit_test(fp64_lower_bound),
        cmocka_unit_test(fp64_upper_bound),
        cmocka_unit_test(fp64_slice_subnormal),
        cmocka_unit_test(fp64_overflow),
        cmocka_unit_test(fp64_underflow),
        cmocka_unit_test(fp64_underflow_lowbit_caps_grid),
        cmocka_unit_test(fp64_rule_order),
        cmocka_unit_test(fp64_transposes_and_padding),
        cmocka_unit_test(slice_exponents_rule),
        cmocka_unit_test(fp32_rules),
        cmocka_unit_test(scan_implementations_agree),
        cmocka_unit_test(scan_values),
        cmocka_unit_test(split_facts),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

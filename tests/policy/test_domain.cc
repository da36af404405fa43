// The domain rules of policy/domain.h at their boundaries and the scan (portable and AVX-512
// agree). The facts the FP64 split rests on are checked in tests/kernels (kernels_split_test).
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
#include <vector>

#include "kernels/common/variants.h"
#include "kernels/scan/operand_scan.h"
#include "policy/domain.h"
#include "policy/reasons.h"
#include "tests/common/rng.h"

using namespace amxblas;
using namespace amxblas::kernels;

namespace {

// The rules on the facts the kernels' scan returns, as the shim applies them
// (shim/domain_check.h). scans: where to keep the summaries, if wanted.
template <typename T>
const char* check_domain(const GemmArgs<T>& g, OperandScans* scans = nullptr) {
    if (const char* why = check_scalars(g.alpha, g.beta)) return why;
    const OperandScans s = scan_gemm_operands(g);
    if (scans) *scans = s;
    return domain_rule<T>(s, g.k);
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An n x n DGEMM (column-major, lda = ldb = n) of ones with some entries replaced.
struct Dgemm {
    int n;
    std::vector<double> a, b, c;
    double alpha = 1, beta = 0;
    explicit Dgemm(int n_, double fill_a = 1, double fill_b = 1)
        : n(n_), a(n_ * n_, fill_a), b(n_ * n_, fill_b), c(n_ * n_, 0) {}
    const char* reason() const {
        const kernels::GemmArgs<double> g{'N', 'N', n, n, n, alpha, a.data(), n,
                                          b.data(), n, beta, const_cast<double*>(c.data()), n};
        return check_domain(g);
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
        return check_domain(g);
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
    assert_reason(d.reason(), nullptr);  // 1e-300 and 1e300: in the FP64 domain since the scaling
}

// With exact per-row/per-column scaling and normalised slices (kernels/pack/pack.h), every finite
// FP64 value is in the domain: subnormals, values past the BF16 range, rows 2^2000 apart, and
// entries with bits far below 2^-126.
void fp64_every_finite_value_in_domain(void**) {
    for (double x : {std::numeric_limits<double>::denorm_min(), -DBL_MIN, 0x1p-127, DBL_MAX, -DBL_MAX, 1e-200,
                     1e200, 0x1p-100 + 0x1p-140, 0x1.FEp127}) {
        Dgemm d(8);
        d.a[1] = x;
        d.b[7] = -x;
        assert_reason(d.reason(), nullptr);
    }
    Dgemm rows(8, 1e-200, 1e200);
    for (int j = 0; j < 8; ++j) rows.a[3 + 8 * j] = 1e200;
    assert_reason(rows.reason(), nullptr);
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
    OperandScans scan;
    assert_reason(check_domain(g, &scan), nullptr);
    assert_true(scan.a.max_abs == 1.5);
    assert_true(scan.b.max_abs == 2.0);
    assert_int_equal(scan.a.max_exponent(), 1);
    a[k - 1 + (m - 1) * lda] = kNaN;  // the last entry of op(A)
    assert_reason(check_domain(g), reason::domain_nonfinite);
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

std::vector<double> assorted_doubles(amxblas::test::Rng& rng, int n) {
    const double specials[] = {0.0, -0.0, 1.0, -1.0, 0x1p-126, -0x1p-127, 1e-310, -4.9e-324,
                               0x1.FEp127, DBL_MAX, 0x1p-100 + 0x1p-140, 3.0, 0.1};
    std::vector<double> v(n);
    for (double& x : v) {
        const int p = rng.below(16);
        x = p < 13 ? specials[p] : std::ldexp(rng.uniform(), rng.below(401) - 200);
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
    amxblas::test::Rng rng(11);
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

// A large operand is scanned by several threads (kernels/scan/operand_scan.cc): the summary must not
// depend on the count. The extremes (largest, smallest, lowest bit, NaN) are put in one place
// each, in different chunks and at a chunk's edge, so that a lost per-thread result shows.
void scan_threads_agree(void**) {
    amxblas::test::Rng rng(12);
    for (ScanImpl impl : {ScanImpl::portable, ScanImpl::avx512}) {
        if (impl == ScanImpl::avx512 && !scan_avx512_available()) continue;
        struct Shape {
            int rows, cols, ld;
        };
        // Contiguous (2^20 entries, 16 chunks), strided, and one column per chunk and more.
        for (const Shape sh : {Shape{1024, 1024, 1024}, Shape{1000, 700, 1003}, Shape{70000, 9, 70001}}) {
            const std::size_t len = std::size_t(sh.ld) * sh.cols;
            std::vector<double> v(len);
            for (double& x : v) x = std::ldexp(0.5 + 0.5 * rng.uniform01(), -3) * ((rng.next() >> 63) ? 1 : -1);
            for (int place = 0; place < 6; ++place) {
                std::vector<double> w = v;
                const std::size_t at = std::size_t((place * 7919 + 3) % sh.cols) * sh.ld + (place * 104729 + 1) % sh.rows;
                w[std::size_t(sh.cols - 1) * sh.ld + sh.rows - 1] = 0x1p40;  // the largest, in the last chunk
                w[at] = 0x1p-30 + 0x1p-60;                // the smallest and the lowest bit
                if (place % 3 == 1) w[len / 2] = kNaN;    // nonfinite in a middle chunk
                if (place % 3 == 2) w[65536] = -kInf;     // at a chunk's first entry
                const OperandSummary one = scan_fp64_with(impl, w.data(), sh.rows, sh.cols, sh.ld, 1);
                for (int threads : {2, 3, 8}) {
                    same_summary(one, scan_fp64_with(impl, w.data(), sh.rows, sh.cols, sh.ld, threads));
                    std::vector<float> f(w.begin(), w.end());
                    same_summary(scan_fp32_with(impl, f.data(), sh.rows, sh.cols, sh.ld, 1),
                                 scan_fp32_with(impl, f.data(), sh.rows, sh.cols, sh.ld, threads));
                }
                // Padding past the rows is never read: a NaN there changes nothing.
                if (sh.ld > sh.rows) {
                    w[sh.rows] = kNaN;
                    same_summary(one, scan_fp64_with(impl, w.data(), sh.rows, sh.cols, sh.ld, 2));
                }
                if (place == 0) {
                    assert_false(one.nonfinite);
                    assert_true(one.max_abs == 0x1p40);
                    assert_true(one.min_abs == 0x1p-30 + 0x1p-60);
                    assert_true(one.min_lowbit == 0x1p-60);
                }
            }
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

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fp64_in_domain),
        cmocka_unit_test(fp64_nonfinite),
        cmocka_unit_test(fp64_nonfinite_scalars),
        cmocka_unit_test(fp64_rule_order),
        cmocka_unit_test(fp64_every_finite_value_in_domain),
        cmocka_unit_test(fp64_transposes_and_padding),
        cmocka_unit_test(fp32_rules),
        cmocka_unit_test(scan_implementations_agree),
        cmocka_unit_test(scan_values),
        cmocka_unit_test(scan_threads_agree),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// The domain rules of policy/domain.h at their boundaries, on the kernels' scan of real
// operands (the scan itself: tests/kernels/scan/kernels_scan_test.cc). The facts the FP64 split rests on are checked in tests/kernels (kernels_split_test).
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
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

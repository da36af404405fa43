// The operand scan (kernels/scan/operand_scan.h) of one instruction set of kernels/isa/isas.def,
// chosen by AMXBLAS_TEST_ISA (default portable): its summaries on chosen values, the same as
// the portable definition's on assorted inputs, and the same for every thread count. Exits 77
// (CTest: skipped) where this CPU cannot run the instruction set.
// The project's headers and the C++ library first: cmocka.h's fail() macro breaks <ios>.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/isa/isa.h"
#include "kernels/scan/operand_scan.h"
#include "tests/common/rng.h"
#include "tests/kernels/isa/isa_under_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

using namespace amxblas::kernels;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Isa g_isa = Isa::portable;


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

// The instruction set under test against the portable definition.
void scan_implementations_agree(void**) {
    amxblas::test::Rng rng(11);
    for (int len = 0; len <= 40; ++len) {
        for (int rep = 0; rep < 20; ++rep) {
            std::vector<double> v = assorted_doubles(rng, len + 3);
            if (rep % 5 == 1 && len > 0) v[rep % len] = kNaN;
            if (rep % 5 == 2 && len > 0) v[len - 1] = -kInf;
            // Strided: rows = len / 3 + 1 of a column-major matrix with ld = rows + 2.
            const int rows = len / 3 + 1, cols = (len + 3) / (rows + 2);
            same_summary(scan_fp64_with(Isa::portable, v.data(), len, 1, len),
                         scan_fp64_with(g_isa, v.data(), len, 1, len));
            same_summary(scan_fp64_with(Isa::portable, v.data(), rows, cols, rows + 2),
                         scan_fp64_with(g_isa, v.data(), rows, cols, rows + 2));
            std::vector<float> f(v.begin(), v.end());
            same_summary(scan_fp32_with(Isa::portable, f.data(), len, 1, len),
                         scan_fp32_with(g_isa, f.data(), len, 1, len));
            same_summary(scan_fp32_with(Isa::portable, f.data(), rows, cols, rows + 2),
                         scan_fp32_with(g_isa, f.data(), rows, cols, rows + 2));
        }
    }
}

// A large operand is scanned by several threads (kernels/scan/operand_scan.cc): the summary must not
// depend on the count. The extremes (largest, smallest, lowest bit, NaN) are put in one place
// each, in different chunks and at a chunk's edge, so that a lost per-thread result shows.
void scan_threads_agree(void**) {
    amxblas::test::Rng rng(12);
    for (ScanImpl impl : {g_isa}) {
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
    for (ScanImpl impl : {g_isa}) {
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
    g_isa = amxblas::test::isa_under_test("kernels_scan_test");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scan_values),
        cmocka_unit_test(scan_implementations_agree),
        cmocka_unit_test(scan_threads_agree),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

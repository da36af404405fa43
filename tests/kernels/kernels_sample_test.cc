// The sampled decision of FP64 auto (kernels/driver/gemm_sample.h, routed_gemm.cc): the sample is
// the call's own rows and columns; the INT8 certificate decides each sampled entry as it does in
// the whole call; a call whose sample mostly fails is forwarded before either engine's
// certificate runs on the whole call, and a call whose sample mostly passes is decided by the
// whole certificate as before.
#include <cmath>
#include <complex>
#include <vector>

#include "kernels/certificate/fp64_structural_zeros.h"
#include "kernels/driver/emulated_gemm.h"
#include "kernels/driver/gemm_sample.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/int8/int8_certificate.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

using Z = std::complex<double>;

// The index the sample takes for position s of count in 0 .. total - 1 (gemm_sample.cc's rule).
int spaced(int s, int count, int total) { return int((2L * s + 1) * total / (2L * count)); }

// An N x N x N DGEMM (N N) whose first `bad` rows of A cannot be certified by any count of
// either engine: their first K/2 values near 1 meet B's rows near 2^-80 and their last K/2,
// near 2^-80, meet B's rows near 1, so each term of such an entry is about 2^-80 while the
// truncation bounds start from the row's and column's entries near 1. The other rows are
// uniform in [0.5, 1): their entries have K/2 terms near 1 and certify.
struct Split {
    std::vector<double> a, b, c;
    GemmArgs<double> g;
};

Split split_rows(int n, int bad) {
    Split s;
    s.a.resize(std::size_t(n) * n);
    s.b.resize(std::size_t(n) * n);
    s.c.assign(std::size_t(n) * n, NAN);
    kt::Rng rng(17);
    const auto unit = [&rng] { return 0.75 + 0.25 * rng.uniform(); };  // [0.5, 1), 53 bits
    const double tiny = 0x1p-80;
    for (int l = 0; l < n; ++l)
        for (int i = 0; i < n; ++i) {
            const bool first = l < n / 2;
            s.a[i + std::size_t(l) * n] = (i < bad && !first ? tiny : 1.0) * unit();
            s.b[l + std::size_t(i) * n] = (first ? tiny : 1.0) * unit();
        }
    s.g = GemmArgs<double>{'N', 'N', n, n, n, 1.0, s.a.data(), n, s.b.data(), n, 0.0, s.c.data(), n};
    return s;
}

RunOptions auto_options() {
    RunOptions o = kt::options(kFp64Auto, 2);
    o.fp64_engine = Fp64Engine::automatic;
    return o;
}

bool untouched(const std::vector<double>& c) {
    for (double x : c)
        if (!std::isnan(x)) return false;
    return true;
}

// Entry (s, t) of the sample is entry (I[s], J[t]) of the call, through every op, conjugation
// included; the size rules hold.
void test_sample_is_the_calls_rows_and_columns(void**) {
    const int m = 400, n = 300, k = 7;
    for (char ta : {'N', 'T', 'C'})
        for (char tb : {'N', 'C'}) {
            const int lda = ta == 'N' ? m + 3 : k + 2, ldb = tb == 'N' ? k + 1 : n + 5;
            std::vector<Z> a(std::size_t(lda) * (ta == 'N' ? k : m)), b(std::size_t(ldb) * (tb == 'N' ? n : k));
            for (std::size_t q = 0; q < a.size(); ++q) a[q] = Z(double(q), 0.5 + q);
            for (std::size_t q = 0; q < b.size(); ++q) b[q] = Z(-double(q), 0.25 + q);
            const GemmArgs<Z> g{ta, tb, m, n, k, Z(1), a.data(), lda, b.data(), ldb, Z(0), nullptr, m};
            GemmSample<Z> s;
            assert_true(sample_gemm(g, kt::options(kFp64Auto), &s));
            const int r = s.args.m, c = s.args.n;
            assert_true(r <= kSampleSide && c <= kSampleSide && long(r) * c * kSampleShare <= long(m) * n);
            assert_true(long(r) * c >= kSampleMin && s.args.k == k);
            const auto op = [](char t, const std::vector<Z>& x, int ld, int i, int l) {
                const Z v = t == 'N' ? x[i + std::size_t(l) * ld] : x[l + std::size_t(i) * ld];
                return t == 'C' ? std::conj(v) : v;
            };
            for (int q = 0; q < r; ++q)
                for (int l = 0; l < k; ++l)
                    assert_true(s.args.a[q + std::size_t(l) * s.args.lda] == op(ta, a, lda, spaced(q, r, m), l));
            for (int q = 0; q < c; ++q)
                for (int l = 0; l < k; ++l) {
                    const Z want = tb == 'N' ? b[l + std::size_t(spaced(q, c, n)) * ldb]
                                             : std::conj(b[spaced(q, c, n) + std::size_t(l) * ldb]);
                    assert_true(s.args.b[l + std::size_t(q) * s.args.ldb] == want);
                }
        }
    // Too small to sample: fewer than kSampleMin entries at 1/kSampleShare of C.
    std::vector<double> x(100 * 100, 1.0);
    GemmSample<double> none;
    assert_false(sample_gemm(GemmArgs<double>{'N', 'N', 100, 100, 100, 1.0, x.data(), 100, x.data(), 100, 0.0,
                                              nullptr, 100},
                             kt::options(kFp64Auto), &none));
}

// The INT8 certificate fails exactly the entries of the bad rows, in the whole call and in the
// sample: its verdict on a sampled entry is the whole call's.
void test_int8_verdict_per_entry(void**) {
    const int n = 256, bad = 96;
    Split s = split_rows(n, bad);
    RunOptions o = kt::options(kFp64Auto, 2);
    StructuralZeros<double> zeros(s.g);
    const StructuralTest test{[&zeros](int i, int j) { return zeros.spans_apart(i, j); },
                              [&zeros](int i, int j) { return zeros.terms_zero(i, j); }};
    Int8Decision whole;
    assert_null(decide_dgemm_int8(s.g, o, test, &whole));
    assert_int_equal(whole.failing, long(bad) * n);
    GemmSample<double> sample;
    assert_true(sample_gemm(s.g, o, &sample));
    int sampled_bad = 0;
    for (int q = 0; q < sample.args.m; ++q) sampled_bad += spaced(q, sample.args.m, n) < bad;
    assert_true(sampled_bad > 0 && sampled_bad < sample.args.m);
    StructuralZeros<double> sample_zeros(sample.args);
    const StructuralTest sample_test{[&sample_zeros](int i, int j) { return sample_zeros.spans_apart(i, j); },
                                     [&sample_zeros](int i, int j) { return sample_zeros.terms_zero(i, j); }};
    Int8Decision part;
    assert_null(decide_dgemm_int8(sample.args, o, sample_test, &part));
    assert_int_equal(part.failing, long(sampled_bad) * sample.args.n);
}

// Three quarters of the rows fail: the sample says so and the call is forwarded with nothing of
// the whole call's certificate run (only the sample's time is counted) and C untouched. One quarter: the sample
// passes, and the whole certificate, run as before, forwards the call (1/4 > 1/16).
void test_forwarded_by_the_sample_or_the_whole(void**) {
    const int n = 256;
    for (int bad : {3 * n / 4, n / 4}) {
        Split s = split_rows(n, bad);
        RunOptions o = auto_options();
        PhaseTimes times;
        o.times = &times;
        const char* why = emulate_gemm(s.g, o);
        assert_non_null(why);
        assert_string_equal(why, "accuracy:uncertified");
        assert_true(untouched(s.c));
        assert_true(times.certificate_s > 0);  // the sample's time, at least
        const bool whole_ran = times.certificate_test_s > 0;  // BF16's whole certificate, the last to refuse
        if (bad > n / 2) assert_false(whole_ran);
        else assert_true(whole_ran);
    }
    // No bad row: certified and routed.
    Split good = split_rows(n, 0);
    assert_null(emulate_gemm(good.g, auto_options()));
    assert_false(untouched(good.c));
}

// ZGEMM: the same rows, as real parts with imaginary parts of the same size, forwarded by the
// sample.
void test_zgemm_forwarded_by_the_sample(void**) {
    const int n = 256;
    Split s = split_rows(n, n);
    std::vector<Z> a(s.a.size()), b(s.b.size()), c(std::size_t(n) * n, Z(NAN, NAN));
    for (std::size_t q = 0; q < a.size(); ++q) a[q] = Z(s.a[q], -0.5 * s.a[q]);
    for (std::size_t q = 0; q < b.size(); ++q) b[q] = Z(0.5 * s.b[q], s.b[q]);
    const GemmArgs<Z> g{'N', 'N', n, n, n, Z(1), a.data(), n, b.data(), n, Z(0), c.data(), n};
    RunOptions o = auto_options();
    PhaseTimes times;
    o.times = &times;
    const char* why = emulate_gemm(g, o);
    assert_non_null(why);
    assert_string_equal(why, "accuracy:uncertified");
    assert_true(times.certificate_s > 0 && times.certificate_test_s == 0);
    for (const Z& x : c) assert_true(std::isnan(x.real()));
}

}  // namespace

int main(int argc, char** argv) {
    if (const int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_is_the_calls_rows_and_columns),
        cmocka_unit_test(test_int8_verdict_per_entry),
        cmocka_unit_test(test_forwarded_by_the_sample_or_the_whole),
        cmocka_unit_test(test_zgemm_forwarded_by_the_sample),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

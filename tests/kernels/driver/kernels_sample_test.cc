// The sampled decision of FP64 auto (kernels/driver/gemm_sample.h, routed_gemm.cc): the sample is
// the call's own rows and columns; the INT8 certificate decides each sampled entry as it does in
// the whole call; a call whose sample mostly fails is forwarded before either engine's
// certificate runs on the whole call, and a call whose sample mostly passes is decided by the
// whole certificate as before.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/certificate/fp64_structural_zeros.h"
#include "kernels/bf16/bf16_screen.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/gemm_sample.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/driver/sample_screen.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/int8/int8_gemm.h"
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

// Samples of the kinds the screen meets (sample_screen.h), as N N operands of r x K and K x c:
// value(kind, operand, row, col) for op(A) (operand 0) and op(B) (operand 1).
// b_uncertifiable: op(A) exact in BF16's first slice (integers, zero past K/2), so only the
// screen's a_0(i) rho_B term can show that its entries fail. zero_terms: uncertifiable, but the
// entries of even rows and odd columns are zero term by term (each term has a zero factor),
// which both engines pass.
enum class Kind { uniform, uncertifiable, b_uncertifiable, zero_terms, half_bad, integers, log_uniform, scaled_rows };
constexpr Kind kKinds[] = {Kind::uniform,  Kind::uncertifiable, Kind::b_uncertifiable, Kind::zero_terms,
                           Kind::half_bad, Kind::integers,      Kind::log_uniform,     Kind::scaled_rows};

double sample_value(Kind kind, int operand, int row, int col, int rows, int k, kt::Rng* rng) {
    const double unit = 0.75 + 0.25 * rng->uniform();  // [0.5, 1), 53 bits
    const int l = operand == 0 ? col : row;              // the K index
    const bool first = l < k / 2;
    switch (kind) {
    case Kind::uniform: return rng->uniform();
    case Kind::uncertifiable: return (operand == 0 ? (first ? 1.0 : 0x1p-80) : (first ? 0x1p-80 : 1.0)) * unit;
    case Kind::b_uncertifiable:
        if (operand == 0) return first ? double(1 + rng->below(127)) : 0.0;
        return (first ? 0x1p-80 : 1.0) * unit;
    case Kind::zero_terms: {
        const bool even = (operand == 0 ? row : col) % 2 == 0;
        if (operand == 0) return (first ? 1.0 : even ? 0.0 : 0x1p-80) * unit;
        return (first ? (even ? 0x1p-80 : 0.0) : 1.0) * unit;
    }
    case Kind::half_bad: {
        const bool bad = operand == 0 && row < (rows + 1) / 2 && !first;
        return (operand == 0 ? (bad ? 0x1p-80 : 1.0) : (first ? 0x1p-80 : 1.0)) * unit;
    }
    case Kind::integers: return double(rng->below(255) - 127);
    case Kind::log_uniform: return std::ldexp(rng->uniform(), rng->below(81) - 40);
    case Kind::scaled_rows: {  // rows of op(A) far apart, one of them below 2^-1022 once scaled
        const int o = operand == 0 ? row : col;
        const int e = operand == 0 ? (o % 3 == 0 ? 600 : o % 3 == 1 ? -600 : 0) : 0;
        return std::ldexp(unit * (l == 5 && o == 1 ? 0x1p-1060 : 1.0), e);
    }
    }
    return 0;
}

template <typename T>
struct Operands {
    std::vector<T> a, b;
    GemmArgs<T> g;
};

template <typename T>
Operands<T> screen_operands(Kind kind, int r, int c, int k, std::uint64_t seed) {
    kt::Rng rng(seed);
    Operands<T> x;
    x.a.resize(std::size_t(r) * k);
    x.b.resize(std::size_t(k) * c);
    const auto value = [&](int operand, int row, int col, int rows) {
        const double re = sample_value(kind, operand, row, col, rows, k, &rng);
        if constexpr (std::is_same_v<T, double>) return re;
        else return T(re, 0.5 * sample_value(kind, operand, row, col, rows, k, &rng));
    };
    for (int l = 0; l < k; ++l)
        for (int i = 0; i < r; ++i) x.a[i + std::size_t(l) * r] = value(0, i, l, r);
    for (int j = 0; j < c; ++j)
        for (int l = 0; l < k; ++l) x.b[l + std::size_t(j) * k] = value(1, l, j, k);
    x.g = GemmArgs<T>{'N', 'N', r, c, k, T(1), x.a.data(), r, x.b.data(), k, T(0), nullptr, r};
    return x;
}

// The engines screen_sample screens, by Fp64Engine.
struct Engines {
    bool at[kFp64EngineCount] = {};
};
Engines engines(bool int8, bool bf16) {
    Engines e;
    e.at[static_cast<int>(Fp64Engine::int8)] = int8;
    e.at[static_cast<int>(Fp64Engine::bf16)] = bf16;
    return e;
}

const char* decide_int8(const GemmArgs<double>& g, const RunOptions& o, const StructuralTest& t, Int8Decision* d) {
    return decide_dgemm_int8(g, o, t, d);
}
const char* decide_int8(const GemmArgs<Z>& g, const RunOptions& o, const StructuralTest& t, Int8Decision* d) {
    return decide_zgemm_int8(g, o, t, d);
}
const char* prepare(const GemmArgs<double>& g, const RunOptions& o, PreparedDgemm* p) { return prepare_dgemm(g, o, p); }
const char* prepare(const GemmArgs<Z>& g, const RunOptions& o, PreparedDgemm* p) { return prepare_zgemm(g, o, p); }

// Every entry the screen counts for an engine fails that engine's own certificate on the same
// sample (it counts no more than the certificate fails), and the BF16 split facts it computes for
// itself are the engine's, bit for bit (or below them where the engine adds its margin for
// scaled values rounded below 2^-1022). Uncertifiable samples are counted whole; uniform ones
// not at all.
template <typename T>
void check_screen(Kind kind, int r, int c, int k, std::uint64_t seed) {
    constexpr int parts = std::is_same_v<T, double> ? 1 : 2;
    const Operands<T> x = screen_operands<T>(kind, r, c, k, seed);
    RunOptions one = kt::options(kFp64Auto, 1);
    one.fp64_auto_depth = kFp64Slices;  // the BF16 certificate over every depth, as the screen's bound
    const SampleScreen screen = screen_sample(x.g, one, engines(true, true).at, -1);
    assert_true(screen.of(Fp64Engine::int8) >= 0 && screen.of(Fp64Engine::bf16) >= 0);
    const long entries = long(r) * c * parts;

    StructuralZeros<T> zeros(x.g);
    const StructuralTest structural{[&zeros](int i, int j) { return zeros.spans_apart(i, j / parts); },
                                    [&zeros](int i, int j) { return zeros.terms_zero(i, j / parts); }};
    Int8Decision d;
    assert_null(decide_int8(x.g, one, structural, &d));
    assert_true(screen.of(Fp64Engine::int8) <= d.failing);

    PreparedDgemm p;
    assert_null(prepare(x.g, one, &p));
    const std::vector<double> lower = kt::whole_lower(&p, r, parts * c);
    Fp64Certificate cert;
    const bool began = fp64_certify(p.a, p.b, parts * k, lower.data(), r, one.fp64_tol, 3, 1, &cert,
                                    parts == 1 ? 0 : k + 1, [&structural](int i, int j) {
        return structural.by_spans(i, j) || structural.by_terms(i, j);
    });
    const long bf16_failing = began ? cert.failing : entries;
    assert_true(screen.of(Fp64Engine::bf16) <= bf16_failing);

    ScreenSplitFacts f;
    assert_true(screen_split_facts(x.g, &f));
    const bool rounded = kind == Kind::scaled_rows;  // the engine's rho then carries its margin
    if (rounded) {
        assert_true(f.rho_a <= p.a.rho[kFp64Slices] && f.rho_b <= p.b.rho[kFp64Slices]);
    } else {
        assert_true(f.rho_a == p.a.rho[kFp64Slices] && f.rho_b == p.b.rho[kFp64Slices]);
    }
    for (int i = 0; i < r; ++i)
        assert_true(f.a0[i] == (p.a.active > 0 ? p.a.norms[i] * std::ldexp(1.0, p.a.v[0]) : 0.0));

    if (kind == Kind::uncertifiable || kind == Kind::b_uncertifiable) {
        assert_int_equal(screen.of(Fp64Engine::int8), entries);
        assert_int_equal(screen.of(Fp64Engine::bf16), entries);
    }
    // An INT8 count at most `enough` ends the screen before BF16's; a BF16 count may stop above it.
    const SampleScreen early = screen_sample(x.g, one, engines(true, true).at, screen.of(Fp64Engine::int8));
    assert_true(early.of(Fp64Engine::int8) <= screen.of(Fp64Engine::int8) && early.of(Fp64Engine::bf16) == -1);
    const SampleScreen bf16_only = screen_sample(x.g, one, engines(false, true).at, 0);
    assert_true(bf16_only.of(Fp64Engine::int8) == -1 && bf16_only.of(Fp64Engine::bf16) <= screen.of(Fp64Engine::bf16) &&
                (bf16_only.of(Fp64Engine::bf16) > 0) == (screen.of(Fp64Engine::bf16) > 0));
    if (kind == Kind::half_bad) assert_true(2 * screen.of(Fp64Engine::int8) >= entries && 2 * screen.of(Fp64Engine::bf16) >= entries);
    if (kind == Kind::uniform) assert_true(screen.of(Fp64Engine::int8) == 0 && screen.of(Fp64Engine::bf16) == 0);
}

void test_screen_counts_only_failing_entries(void**) {
    std::uint64_t seed = 300;
    for (Kind kind : kKinds)
        for (const int* s : {(const int[]){8, 8, 256}, (const int[]){16, 12, 96}, (const int[]){5, 16, 1000}}) {
            check_screen<double>(kind, s[0], s[1], s[2], ++seed);
            check_screen<Z>(kind, s[0], s[1], s[2], ++seed);
        }
}

// The counts the sample hands to the call's certificate (RunOptions::int8_counts_from and
// int8_counts_to, set by sample_uncertified): at the upper ends below, the call decides as it
// does with every count, count, failing and margin to the bit. Inputs where the call settles
// within the sample's counts, and one whose rows outside the sample spread over 2^40, so that
// the call needs more moduli than its sample and certifies every count again.
void test_int8_counts_from_the_sample(void**) {
    const int m = 300, n = 280, k = 400;
    for (int kind = 0; kind < 4; ++kind) {
        kt::Rng rng(900 + kind);
        std::vector<double> a(std::size_t(m) * k), b(std::size_t(k) * n);
        for (std::size_t q = 0; q < a.size(); ++q) {
            const int l = int(q / m);
            double v = rng.uniform();
            if (kind == 1) v *= std::ldexp(1.0, -l / 16);  // graded along K
            if (kind == 2) v *= std::ldexp(1.0, int(20 * rng.uniform()));
            a[q] = v;
        }
        for (double& x : b) x = rng.uniform();
        const GemmArgs<double> g{'N', 'N', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, nullptr, m};
        const RunOptions o = kt::options(kFp64Auto, 2);
        if (kind == 3) {  // the rows the sample leaves out (its rows depend on the sizes alone)
            GemmSample<double> first;
            assert_true(sample_gemm(g, o, &first));
            std::vector<bool> sampled(m);
            for (int q = 0; q < first.args.m; ++q) sampled[spaced(q, first.args.m, m)] = true;
            for (std::size_t q = 0; q < a.size(); ++q)
                if (!sampled[q % m]) a[q] *= std::ldexp(1.0, int(40 * std::fabs(rng.uniform())));
        }
        StructuralZeros<double> zeros(g);
        const StructuralTest test{[&zeros](int i, int j) { return zeros.spans_apart(i, j); },
                                  [&zeros](int i, int j) { return zeros.terms_zero(i, j); }};
        Int8Decision whole;
        assert_null(decide_dgemm_int8(g, o, test, &whole));
        GemmSample<double> sample;
        assert_true(sample_gemm(g, o, &sample));
        StructuralZeros<double> sample_zeros(sample.args);
        const StructuralTest sample_test{[&sample_zeros](int i, int j) { return sample_zeros.spans_apart(i, j); },
                                         [&sample_zeros](int i, int j) { return sample_zeros.terms_zero(i, j); }};
        Int8Decision part;
        assert_null(decide_dgemm_int8(sample.args, o, sample_test, &part));
        assert_int_equal(part.failing, 0);
        assert_true(part.first_clean > 0 && part.first_clean <= part.count && part.count <= whole.count);
        if (kind == 3) assert_true(whole.count > part.count + 1);
        // The sample's pick, one past it (what the sample hands on) and every count (the narrowed
        // pass with nothing above it).
        for (int to : {part.count, std::min(part.count + 1, kInt8MaxModuli), kInt8MaxModuli}) {
            RunOptions hinted = o;
            hinted.int8_counts_from = part.first_clean;
            hinted.int8_counts_to = to;
            Int8Decision d;
            assert_null(decide_dgemm_int8(g, hinted, test, &d));
            if (d.count != whole.count || d.failing != whole.failing ||
                std::memcmp(&d.margin, &whole.margin, sizeof d.margin))
                fail_msg("kind %d, counts %d .. %d: count %d failing %ld first clean %d margin %.17g; every count: "
                         "%d %ld %d %.17g", kind, part.first_clean, to, d.count, d.failing, d.first_clean, d.margin,
                         whole.count, whole.failing, whole.first_clean, whole.margin);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (const int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_is_the_calls_rows_and_columns),
        cmocka_unit_test(test_int8_verdict_per_entry),
        cmocka_unit_test(test_forwarded_by_the_sample_or_the_whole),
        cmocka_unit_test(test_zgemm_forwarded_by_the_sample),
        cmocka_unit_test(test_screen_counts_only_failing_entries),
        cmocka_unit_test(test_int8_counts_from_the_sample),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

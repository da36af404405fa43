// The INT8 FP64 engine (kernels/int8/, docs/fp64-int8.md): the CRT reconstruction exact, the
// certificate's promise entry by entry against an exact reference (DGEMM and ZGEMM, every
// shape it must handle), the results bitwise identical across thread counts and chunkings,
// and the calls it cannot certify forwarded.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kernels/common/pow2.h"
#include "kernels/certificate/fp64_structural_zeros.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/int8/crt_basis.h"
#include "kernels/int8/crt_reconstruct.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/int8/int8_pack.h"
#include "kernels/pack/fp64_exponents.h"
#include "kernels/pack/operand_element.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/int8/int8_gemm.h"
#include "kernels/int8/int8_refine.h"
#include "tests/kernels/fp64_cases.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

using kt::Case;
using kt::exact_entry;
using kt::make_case;

RunOptions int8_options(int products, int threads) {
    RunOptions o = kt::options(products, threads);
    o.fp64_engine = Fp64Engine::int8;
    return o;
}

// Runs the INT8 engine (auto unless `products`) and checks |C - AB| <= tol gamma_K (|A||B|)_ij
// for every entry (alpha = 1, beta = 0).
Fp64AutoReport check_certified(Case& cs, int threads, double tol = 1, int products = kFp64Auto) {
    const Fp64AutoReport rep = kt::run_within_bound(cs, int8_options(products, threads), tol);
    assert_true(rep.engine == Fp64Engine::int8);
    assert_true(rep.products >= kInt8MinModuli && rep.products <= kInt8MaxModuli);
    if (products == kFp64Auto) assert_true(rep.margin >= 1);
    return rep;
}

void test_moduli_coprime_and_ranges(void**) {
    for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) {
        const CrtBasis& b = crt_basis(c);
        assert_int_equal(b.count, c);
        assert_int_equal(b.m[0], 256);
        for (int l = 0; l < c; ++l) {
            assert_true(b.m[l] <= 256 && b.m[l] > 128);
            for (int r = 0; r < l; ++r) {
                int x = b.m[l], y = b.m[r];
                while (y) std::swap(x %= y, y);
                assert_int_equal(x, 1);
            }
            // W_l q_l = 1 modulo m_l, W_l's residue taken limb by limb.
            long rem = 0;
            for (int i = 2; i >= 0; --i) {
                rem = (rem * (long(1) << 32) + long(b.w[l].w[i] >> 32)) % b.m[l];
                rem = (rem * (long(1) << 32) + long(b.w[l].w[i] & 0xFFFFFFFF)) % b.m[l];
            }
            assert_int_equal(rem * b.q[l] % b.m[l], 1);
            assert_int_equal(b.two32_mod[l], int(std::fmod(0x1p32, b.m[l])));
            assert_int_equal(b.two64_mod[l], int(((unsigned __int128)1 << 64) % unsigned(b.m[l])));
        }
        assert_true(b.range_bits <= b.log2_M - 2);
        if (c > kInt8MinModuli) assert_true(b.range_bits >= crt_basis(c - 1).range_bits);
    }
    assert_int_equal(crt_basis(13).range_bits, 100);  // M = 2^102.5
    assert_int_equal(crt_basis(16).range_bits, 123);  // M = 2^125.4
    assert_int_equal(crt_basis(20).range_bits, 153);  // M = 2^155.4
    assert_int_equal(crt_basis(24).range_bits, 182);  // M = 2^184.6
}

double round_to_double_i(__int128 x) { return round_to_double(Wide::from(x)); }

// One rounding to nearest even from any 128-bit integer: cases on both sides of every tie.
void test_round_to_double(void**) {
    kt::Rng r(3);
    for (int shift = 0; shift <= 70; ++shift)
        for (int trial = 0; trial < 50; ++trial) {
            const std::uint64_t mant = std::uint64_t(std::fabs(r.uniform()) * 0x1p52) | (std::uint64_t(1) << 52) | std::uint64_t(trial & 1);
            const __int128 base = __int128(mant) << shift;
            const double want_base = std::ldexp(double(mant), shift);
            assert_true(round_to_double_i(base) == want_base);
            assert_true(round_to_double_i(-base) == -want_base);
            if (shift == 0) continue;
            const __int128 half = __int128(1) << (shift - 1);
            const double up = std::ldexp(double(mant + 1), shift);
            assert_true(round_to_double_i(base + half - 1) == want_base);
            assert_true(round_to_double_i(base + half + 1) == up);
            assert_true(round_to_double_i(base + half) == ((mant & 1) ? up : want_base));
            assert_true(round_to_double_i(-(base + half + 1)) == -up);
        }
    assert_true(round_to_double_i(0) == 0.0);
    assert_true(round_to_double_i((__int128(1) << 124) + 1) == 0x1p124);
}

// times_pow2 (the reconstruction's scaling and rounding) is std::ldexp bit for bit: normal,
// subnormal, zero and overflowing results, both signs, exponents past FP64's range.
void test_times_pow2_is_ldexp(void**) {
    kt::Rng r(29);
    for (int trial = 0; trial < 200000; ++trial) {
        double x = std::ldexp(r.uniform(), int(r.uniform() * 1100));
        if (trial % 97 == 0) x = 0;
        if (trial % 89 == 0) x = std::ldexp(r.uniform(), -1060);  // subnormal-ish inputs too
        const int e = int(r.uniform() * 1200);
        const double got = times_pow2(x, e), want = std::ldexp(x, e);
        if (std::memcmp(&got, &want, sizeof got) != 0)
            fail_msg("times_pow2(%a, %d) = %a, ldexp gives %a", x, e, got, want);
    }
    for (int e = -1074; e <= 1023; ++e) assert_true(pow2(e) == std::ldexp(1.0, e));
}

// Facts of `outer` rows (columns) for the certificate test below: zero rows, rows whose
// entries are integers once scaled (flags off at every count), rows near underflow (the
// underflow term enters) and ordinary ones, mixed.
Int8OperandFacts random_facts(kt::Rng& r, int outer, int depth, int underflow_from) {
    Int8OperandFacts f;
    f.outer = outer;
    f.depth = depth;
    f.e.resize(outer);
    f.nu.resize(outer);
    f.n1.resize(outer);
    f.lsb.resize(outer);
    f.zero.resize(outer);
    for (int o = 0; o < outer; ++o) {
        int kind = int(std::fabs(r.uniform()) * 64);  // 0 zero, 1 near underflow, 2-5 integers
        if (kind == 1 && o < underflow_from) kind = 6;
        f.zero[o] = kind == 0;
        f.e[o] = kind == 0 ? 0 : kind == 1 ? -1000 - int(std::fabs(r.uniform()) * 60) : int(r.uniform() * 30);
        f.nu[o] = kind == 0 ? 0 : int(std::fabs(r.uniform()) * 9);
        f.n1[o] = kind == 0 ? 0 : (0.5 + std::fabs(r.uniform())) * std::ldexp(1.0, f.nu[o]);
        f.lsb[o] = kind == 0 ? kLsbNone : kind >= 2 && kind <= 5 ? f.e[o] : f.e[o] - int(std::fabs(r.uniform()) * 80);
    }
    f.any_nonzero = true;
    return f;
}

// add_block's block-row test (vectorized, counts from the top down with early exits) decides
// exactly as passes() entry by entry: the same count, failures, margin and failing entries,
// across tolerances (tol gamma_K below u takes its other branch), depths, lower bounds with
// zeros and structural answers, and a block wider than its 256-column chunks.
void test_block_row_test_is_per_entry(void**) {
    kt::Rng r(31);
    const int m = 300, n = 300;
    for (int depth : {64, 2048, 100000})
        for (double tol : {1.0, 0.01, 1e-4, 30.0}) {
            // Columns near underflow only past 256: the first chunk of 256 columns runs the
            // vectorized test in every row but those near underflow, the rest entry by entry.
            const Int8OperandFacts fa = random_facts(r, m, depth, 0), fb = random_facts(r, n, depth, 256);
            std::vector<double> lower(std::size_t(m) * n);
            // lhat up to 2^14 K (every term at its row's and column's maximum), spread over
            // 2^-20 of that, so that the entries pass at counts spread over the range.
            for (double& x : lower) {
                const double u = std::fabs(r.uniform());
                x = u < 0.1 ? 0 : std::floor(std::ldexp(u * depth, 14 - int(std::fabs(r.uniform()) * 20)));
            }
            const StructuralTest structural{[](int i, int j) { return (i + 2 * j) % 5 == 0; },
                                            [](int i, int j) { return (7 * i + j) % 3 == 0; }};
            Int8BlockCertificate fast, slow;
            const bool began = fast.begin(fa, fb, depth, tol, kInt8MinModuli, structural);
            assert_true(began == slow.begin(fa, fb, depth, tol, kInt8MinModuli, structural));
            if (!began) continue;
            // Blocks of 128 rows; the first block row one 300-wide block, the rest 256 + 44.
            for (int i0 = 0; i0 < m; i0 += 128) {
                const int rows = std::min(128, m - i0);
                const double* at = lower.data() + std::size_t(i0) * n;
                if (i0 == 0) {
                    fast.add_block(i0, 0, rows, n, at, n);
                    slow.add_block_per_entry(i0, 0, rows, n, at, n);
                } else {
                    fast.add_block(i0, 0, rows, 256, at, n);
                    fast.add_block(i0, 256, rows, n - 256, at + 256, n);
                    slow.add_block_per_entry(i0, 0, rows, 256, at, n);
                    slow.add_block_per_entry(i0, 256, rows, n - 256, at + 256, n);
                }
            }
            for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) {
                std::int64_t f1, f2, l1, l2;
                double g1, g2;
                fast.tally(c, &f1, &l1, &g1);
                slow.tally(c, &f2, &l2, &g2);
                if (f1 != f2 || l1 != l2 || std::memcmp(&g1, &g2, sizeof g1))
                    fail_msg("depth %d tol %g count %d: block rows count %lld failing, %lld loose, margin %.17g; "
                             "entries %lld, %lld, %.17g", depth, tol, c, (long long)f1, (long long)l1, g1,
                             (long long)f2, (long long)l2, g2);
            }
            Int8Decision d1, d2;
            fast.decide(&d1);
            slow.decide(&d2);
            if (d1.count != d2.count || d1.failing != d2.failing || std::memcmp(&d1.margin, &d2.margin, sizeof d1.margin))
                fail_msg("depth %d tol %g: block rows give count %d failing %ld margin %.17g, entries %d %ld %.17g",
                         depth, tol, d1.count, d1.failing, d1.margin, d2.count, d2.failing, d2.margin);
            std::vector<std::size_t> f1, f2;
            fast.failing_in(0, 0, m, n, lower.data(), n, &f1);
            slow.failing_in(0, 0, m, n, lower.data(), n, &f2);
            assert_true(f1 == f2);
        }
}

// fails_at_every_count (the sample screen's INT8 test) against its definition: an entry fails
// at every count when the per-entry test, given lhat = U 2^14, fails it at each count
// (add_block_per_entry, one entry a certificate, tally). Rows near underflow (the underflow
// term), integer rows (flags off, lhs 0) and ordinary ones; upper bounds spread so that entries
// pass at counts all over the range; tolerances on both sides of u.
void test_every_count_failure_is_its_definition(void**) {
    kt::Rng r(47);
    const int m = 40, n = 40;
    long failing = 0, passing = 0;
    for (int depth : {64, 100000})
        for (double tol : {1.0, 1e-4}) {
            const Int8OperandFacts fa = random_facts(r, m, depth, 0), fb = random_facts(r, n, depth, 0);
            Int8BlockCertificate cert;
            if (!cert.begin(fa, fb, depth, tol, kInt8MinModuli, {})) continue;
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    const double u = std::fabs(r.uniform());
                    const double upper = u < 0.05 ? 0 : std::ldexp(u * depth, -int(std::fabs(r.uniform()) * 40));
                    Int8BlockCertificate one;
                    assert_true(one.begin(fa, fb, depth, tol, kInt8MinModuli, {}));
                    const double lower = upper * 0x1p14;
                    one.add_block_per_entry(i, j, 1, 1, &lower, 1);
                    bool every = true;
                    for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) {
                        std::int64_t f, loose;
                        double margin;
                        one.tally(c, &f, &loose, &margin);
                        Int8Halves h;
                        if (int8_halves(crt_basis(c), depth, &h) && f == 0) every = false;
                    }
                    if (cert.fails_at_every_count(i, j, upper) != every)
                        fail_msg("depth %d tol %g entry (%d, %d), U %.17g: fails_at_every_count says %d", depth, tol, i,
                                 j, upper, int(!every));
                    (every ? failing : passing)++;
                }
        }
    assert_true(failing > 100 && passing > 100);  // both answers were asked for
}

// Every integer below 2^range_bits comes back exactly from residues given as any
// representatives (the accumulators are not reduced).
void test_crt_recovers_exactly(void**) {
    kt::Rng r(11);
    for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) {
        const CrtBasis& b = crt_basis(c);
        for (int trial = 0; trial < 2000; ++trial) {
            const int bits = std::min(126, 1 + int(r.uniform() * 0.5 * (b.range_bits - 1) + 0.5 * (b.range_bits - 1)));
            unsigned __int128 ux = 0;  // unsigned: the shifts may carry bits past the top
            for (int w = 0; w < bits; w += 30) ux = (ux << 30) | std::uint32_t(std::fabs(r.uniform()) * 0x1p30);
            __int128 x = __int128(ux & (((unsigned __int128)1 << bits) - 1));
            if (trial % 7 == 0 && b.range_bits < 127) x = (__int128(1) << b.range_bits) - 1;  // the edge
            if (trial & 1) x = -x;
            std::int32_t res[kInt8MaxModuli];
            for (int l = 0; l < c; ++l) {
                __int128 v = x % b.m[l];
                res[l] = std::int32_t(v) + b.m[l] * int(r.uniform() * 1000);
            }
            assert_true(crt_value(b, res, 1) == Wide::from(x));
            // The FP64 reconstruction from y_l = x q_l mod m_l, symmetric: fl(x), one rounding.
            std::int8_t sym[kInt8MaxModuli];
            for (int l = 0; l < c; ++l) {
                int v = int(x % b.m[l] * b.q[l] % b.m[l]);
                v += v < -(b.m[l] / 2) ? b.m[l] : 0;
                v -= v > (b.m[l] - 1) / 2 ? b.m[l] : 0;
                sym[l] = std::int8_t(v);
            }
            double fast;
            crt_to_double(b, sym, 1, 1, nullptr, &fast);
            if (fast != round_to_double_i(x)) fail_msg("moduli %d: crt_to_double %.17g, want %.17g", c, fast, round_to_double_i(x));
        }
    }
}

// Runs the INT8 engine's auto on a ZGEMM (alpha 1, beta 0, ldc m) and checks each part of C
// against gamma_{K+1} of its own |A'||B'| (docs/fp64-certificate.md, Section 9).
Fp64AutoReport check_zgemm_certified(char ta, char tb, int m, int n, int k, const std::vector<std::complex<double>>& a,
                                     const std::vector<std::complex<double>>& b) {
    using Z = std::complex<double>;
    std::vector<Z> c(std::size_t(m) * n, Z(NAN, NAN));
    const int lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n;
    GemmArgs<Z> g{ta, tb, m, n, k, Z(1, 0), a.data(), lda, b.data(), ldb, Z(0, 0), c.data(), m};
    RunOptions o = int8_options(kFp64Auto, 2);
    Fp64AutoReport rep;
    o.fp64_report = &rep;
    const char* why = amxblas::kernels::emulate_gemm(g, o);
    if (why) fail_msg("forwarded: %s", why);
    assert_true(rep.engine == Fp64Engine::int8);
    const double nu = (k + 1) * 0x1p-53, gamma = nu / (1 - nu);
    const auto at = [](char t, const std::vector<Z>& x, int ld, int row, int col) {
        const Z v = t == 'N' ? x[row + std::size_t(col) * ld] : x[col + std::size_t(row) * ld];
        return t == 'C' ? std::conj(v) : v;
    };
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            long double re = 0, im = 0, wre = 0, wim = 0;
            for (int l = 0; l < k; ++l) {
                const Z x = at(ta, a, lda, i, l), y = at(tb, b, ldb, l, j);
                re += (long double)x.real() * y.real() - (long double)x.imag() * y.imag();
                im += (long double)x.real() * y.imag() + (long double)x.imag() * y.real();
                wre += std::fabs(x.real() * y.real()) + std::fabs(x.imag() * y.imag());
                wim += std::fabs(x.real() * y.imag()) + std::fabs(x.imag() * y.real());
            }
            const Z got = c[i + std::size_t(j) * m];
            assert_true(std::fabs((long double)got.real() - re) <= gamma * wre * (1 + 0x1p-20) + 1e-300);
            assert_true(std::fabs((long double)got.imag() - im) <= gamma * wim * (1 + 0x1p-20) + 1e-300);
        }
    return rep;
}

void test_uniform_certified(void**) {
    for (int k : {1, 2, 7, 64, 300}) {
        Case cs = make_case('N', 'T', 37, 45, k, 10 + k);
        const Fp64AutoReport r = check_certified(cs, 2);
        if (k >= 64) assert_int_equal(r.repaired, 0);
    }
}

void test_transposes_and_fixed_counts(void**) {
    for (char ta : {'N', 'T'})
        for (char tb : {'N', 'T'}) {
            Case cs = make_case(ta, tb, 33, 65, 129, 5 + ta + tb);
            const Fp64AutoReport r = check_certified(cs, 1);
            // Every count from the one auto picked up certifies too (the bound only shrinks).
            Case again = make_case(ta, tb, 33, 65, 129, 5 + ta + tb);
            check_certified(again, 2, 1, std::max(r.products, kInt8MaxModuli));
        }
}

void test_log_uniform_certified(void**) {
    Case cs = kt::log_uniform_case();
    check_certified(cs, 1);
}

// Rows 2^600 apart, subnormals, a zero row and column, K = 1 with values of few bits (exact:
// certified although gamma_1 is one rounding).
void test_wide_ranges_and_exact_inputs(void**) {
    Case cs = kt::wide_range_case();
    check_certified(cs, 2);

    Case k1 = make_case('N', 'N', 20, 30, 1, 4);
    for (double& x : k1.a) x = std::round(x * 64) / 8;
    for (double& x : k1.b) x = std::round(x * 1024) / 4;
    const Fp64AutoReport r = check_certified(k1, 1);
    assert_int_equal(r.repaired, 0);
    for (int j = 0; j < 30; ++j)
        for (int i = 0; i < 20; ++i) assert_true(k1.c[i + j * 20] == k1.a[i] * k1.b[j]);
}

// Entries whose terms all have a zero factor are exact; block-diagonal operands route.
void test_structural_zeros(void**) {
    Case cs = make_case('N', 'N', 40, 40, 40, 21);
    for (int l = 0; l < 40; ++l)
        for (int i = 0; i < 40; ++i) {
            if ((i < 20) != (l < 20)) cs.a[i + l * 40] = 0;
            if ((i < 20) != (l < 20)) cs.b[i + l * 40] = 0;
        }
    check_certified(cs, 2);
    for (int j = 0; j < 40; ++j)
        for (int i = 0; i < 40; ++i)
            if ((i < 20) != (j < 20)) assert_true(cs.c[i + j * 40] == 0);
}

// Rows whose second value is 2^-80 of the first and has 53 significant bits, against columns
// the other way round: no count of moduli represents both, every entry fails, and the call is
// forwarded with C untouched.
void test_uncertifiable_forwarded(void**) {
    Case cs = make_case('N', 'N', 16, 16, 2, 1);
    const double tiny = std::ldexp(1 + 0x1p-52, -80);
    for (int i = 0; i < 16; ++i) {
        cs.a[i] = 1 + i * 0x1p-40;
        cs.a[i + 16] = tiny * (1 + i * 0x1p-20);
        cs.b[2 * i] = tiny * (1 + i * 0x1p-21);
        cs.b[2 * i + 1] = 1 + i * 0x1p-41;
    }
    RunOptions o = int8_options(kFp64Auto, 1);
    const char* why = amxblas::kernels::emulate_gemm(cs.g, o);
    assert_non_null(why);
    assert_string_equal(why, "accuracy:uncertified");
    for (double c : cs.c) assert_true(std::isnan(c));
}

// Rows whose large entries meet the columns' small ones and the reverse (as a DFT code's
// wavefunctions and rotations do): every term of their entries is near 2^-10, below what the
// 7-bit digits of the magnitude product see, so L_ij = 0 and those entries fail at every
// count; one entry near 2^-200 keeps their rows from ever becoming integers. Their
// (|A||B|)_ij is near 2^-3, which passes. Five such rows of 64 make 320 failing entries, more
// than the 256 a call may repair: the first test alone forwards the call (its decision says
// so), the second look (int8_refine.h) certifies them, and the call runs with no repair.
Case spread_rows_case(int n, int k, int spread) {
    Case cs = make_case('N', 'N', n, n, k, 91);
    kt::Rng r(92);
    const auto unit = [&r] { return (0.75 + 0.25 * r.uniform()) * (r.uniform() < 0 ? -1 : 1); };
    for (int l = 0; l < k; ++l) {
        const bool first = l < k / 2;
        for (int i = 0; i < spread; ++i) cs.a[i + std::size_t(l) * n] = (first ? 1.0 : 0x1p-10) * unit();
        for (int j = 0; j < n; ++j) cs.b[l + std::size_t(j) * k] = (first ? 0x1p-10 : 1.0) * unit();
    }
    for (int i = 0; i < spread; ++i) cs.a[i + std::size_t(k / 2 + 1) * n] = 0x1p-200;
    return cs;
}

void test_digits_bound_looked_at_again(void**) {
    const int n = 64, k = 256, spread = 5;
    Case cs = spread_rows_case(n, k, spread);
    StructuralZeros<double> zeros(cs.g);
    const StructuralTest structural{[&zeros](int i, int j) { return zeros.spans_apart(i, j); },
                                    [&zeros](int i, int j) { return zeros.terms_zero(i, j); }};
    Int8Decision first;
    assert_null(decide_dgemm_int8(cs.g, int8_options(kFp64Auto, 2), structural, &first));
    assert_true(first.failing >= long(spread) * n && first.failing > fp64_repair_limit(n, n));
    // The bound it uses is below (|A||B|)_ij (in units of 2^(e_i + f_j)) and within 2^-40 of it
    // (a long double sum is within 2^-55 of the exact value here).
    const OperandView<double> va{'N', n, k, cs.a.data(), n}, vb{'N', k, n, cs.b.data(), k};
    Int8OperandFacts fa, fb;
    assert_null(int8_operand_facts(va, true, 1, &fa));
    assert_null(int8_operand_facts(vb, false, 1, &fb));
    for (int i : {0, spread - 1, spread, n - 1})
        for (int j : {0, 7, n - 1}) {
            long double exact = 0;
            for (int l = 0; l < k; ++l)
                exact += std::fabs((long double)cs.a[i + std::size_t(l) * n]) * std::fabs((long double)cs.b[l + std::size_t(j) * k]);
            exact = std::ldexp(exact, -fa.e[i] - fb.e[j]);
            const double lower = magnitude_lower_bound(va, vb, fa, fb, i, j);
            assert_true(lower <= exact * (1 - 0x1p-50L) && lower >= exact * (1 - 0x1p-40L));
        }
    const Fp64AutoReport rep = check_certified(cs, 2);
    assert_int_equal(rep.repaired, 0);

    // ZGEMM: the same rows with imaginary parts of their size: 640 failing parts, more than
    // the 512 its repairs allow.
    using Z = std::complex<double>;
    std::vector<Z> za(cs.a.size()), zb(cs.b.size());
    for (std::size_t q = 0; q < za.size(); ++q) za[q] = Z(cs.a[q], -0.5 * cs.a[q]);
    for (std::size_t q = 0; q < zb.size(); ++q) zb[q] = Z(0.5 * cs.b[q], cs.b[q]);
    const GemmArgs<Z> zg{'N', 'N', n, n, k, Z(1), za.data(), n, zb.data(), k, Z(0), nullptr, n};
    StructuralZeros<Z> zzeros(zg);
    const StructuralTest zstructural{[&zzeros](int i, int j) { return zzeros.spans_apart(i, j / 2); },
                                     [&zzeros](int i, int j) { return zzeros.terms_zero(i, j / 2); }};
    Int8Decision zfirst;
    assert_null(decide_zgemm_int8(zg, int8_options(kFp64Auto, 2), zstructural, &zfirst));
    assert_true(zfirst.failing > fp64_repair_limit(n, 2 * n));
    assert_int_equal(check_zgemm_certified('N', 'N', n, n, k, za, zb).repaired, 0);

    // The second look's budget: with K = 4096 its 320 entries would take 320 K multiply-adds,
    // above 2^20 and M N K / 64, so the call is forwarded as the first test says.
    Case deep = spread_rows_case(n, 4096, spread);
    const char* why = amxblas::kernels::emulate_gemm(deep.g, int8_options(kFp64Auto, 2));
    assert_non_null(why);
    assert_string_equal(why, "accuracy:uncertified");
}

// The same bits on the backend under test as on the reference one, with 1 and 2 threads and
// with the call cut into small chunks (several super-blocks and K chunks, whose residues are
// reduced between chunks).
void test_bitwise_threads_and_chunks(void**) {
    for (int products : {kFp64Auto, 9, 14}) {
        Case base = make_case('T', 'N', 70, 90, 300, 31);
        RunOptions o = int8_options(products, 1);
        assert_null(amxblas::kernels::emulate_gemm(base.g, o));
        // The backend under test against the portable kernel: the same integers, so the same bits.
        Case ref = make_case('T', 'N', 70, 90, 300, 31);
        RunOptions r = int8_options(products, 2);
        r.backend = Backend::reference;
        assert_null(amxblas::kernels::emulate_gemm(ref.g, r));
        assert_memory_equal(ref.c.data(), base.c.data(), ref.c.size() * sizeof(double));
        for (int variant = 0; variant < 3; ++variant) {
            Case cs = make_case('T', 'N', 70, 90, 300, 31);
            RunOptions v = int8_options(products, variant == 0 ? 2 : 1 + variant % 2);
            if (variant >= 1) {
                v.chunk_rows = 32;
                v.chunk_cols = 64;
                v.chunk_depth = variant == 1 ? 64 : 128;
            }
            assert_null(amxblas::kernels::emulate_gemm(cs.g, v));
            assert_memory_equal(cs.c.data(), base.c.data(), cs.c.size() * sizeof(double));
        }
    }
}

// A caller's micro-kernel set without an INT8 product (RunOptions::microkernels, as
// kernels_geometry_test passes) gets the portable one: the same bits, no null call.
void test_set_without_int8_product(void**) {
    Case base = make_case('N', 'N', 40, 36, 70, 8);
    assert_null(amxblas::kernels::emulate_gemm(base.g, int8_options(kFp64Auto, 1)));
    MicroKernels mk = microkernels_for(Backend::reference);
    mk.product_s8 = nullptr;
    Case cs = make_case('N', 'N', 40, 36, 70, 8);
    RunOptions o = int8_options(kFp64Auto, 2);
    o.backend = Backend::reference;
    o.microkernels = &mk;
    assert_null(amxblas::kernels::emulate_gemm(cs.g, o));
    assert_memory_equal(cs.c.data(), base.c.data(), cs.c.size() * sizeof(double));
}

// ZGEMM: each part within gamma_{K+1} of its own |.| sums (docs/fp64-certificate.md, Section 9),
// for every op including the conjugate transpose.
void test_zgemm_certified(void**) {
    using Z = std::complex<double>;
    for (char ta : {'N', 'C'})
        for (char tb : {'T', 'C'}) {
            const int m = 19, n = 23, k = 37;
            kt::Rng r(ta * 7 + tb);
            std::vector<Z> a(std::size_t(m) * k), b(std::size_t(k) * n);
            for (auto& x : a) x = Z(r.uniform(), r.uniform());
            for (auto& x : b) x = Z(r.uniform(), r.uniform());
            check_zgemm_certified(ta, tb, m, n, k, a, b);
        }
}

void test_nonfinite_forwarded(void**) {
    Case cs = make_case('N', 'N', 8, 8, 8, 2);
    cs.a[13] = INFINITY;
    RunOptions o = int8_options(kFp64Auto, 1);
    const char* why = amxblas::kernels::emulate_gemm(cs.g, o);
    assert_non_null(why);
    assert_string_equal(why, "domain:nonfinite");
    o.fp64_products = 5;
    cs.a[13] = 1;
    why = amxblas::kernels::emulate_gemm(cs.g, o);
    assert_non_null(why);
    assert_string_equal(why, "config:fp64-products");
}

// The facts of op(X) = X ('N', as rows and as columns) and X^T ('T', the same) against their
// definition, row by row in scalar code: the exponent of the largest |x|, the least exponent of
// a set bit (frexp and the integer significand), the scaled sums in K order and the bounds
// from them.
void check_facts_match_definition(const std::vector<double>& x, int rows, int cols, std::int64_t ld, int threads,
                                  const char* label) {
    for (int pass = 0; pass < 4; ++pass) {
        const bool as_rows = pass % 2 == 0;
        const char trans = pass < 2 ? 'N' : 'T';
        OperandView<double> v{trans, trans == 'N' ? rows : cols, trans == 'N' ? cols : rows, x.data(), ld};
        const int outer = as_rows ? v.rows : v.cols, depth = as_rows ? v.cols : v.rows;
        const auto at = [&](int o, int l) {
            const int i = as_rows ? o : l, j = as_rows ? l : o;  // op(X)(i, j)
            return trans == 'N' ? x[std::size_t(j) * ld + i] : x[std::size_t(i) * ld + j];
        };
        Int8OperandFacts f;
        assert_null(int8_operand_facts(v, as_rows, threads, &f));
        bool any = false;
        for (int o = 0; o < outer; ++o) {
            double mx = 0;
            int lsb = kLsbNone;
            for (int l = 0; l < depth; ++l) {
                const double a = std::fabs(at(o, l));
                mx = std::max(mx, a);
                if (a == 0) continue;
                int ex;
                const double m = std::frexp(a, &ex);
                const std::uint64_t sig = std::uint64_t(std::ldexp(m, 53));
                lsb = std::min(lsb, ex - 53 + __builtin_ctzll(sig));
            }
            const int e = mx != 0 ? ceil_log2(mx) : 0;
            double s1 = 0, s2 = 0;
            for (int l = 0; l < depth; ++l) {
                const double a = std::ldexp(std::fabs(at(o, l)), -e);
                s1 += a;
                s2 += a * a;
            }
            any = any || mx != 0;
            if (f.e[o] != e || f.lsb[o] != lsb || f.zero[o] != (mx == 0))
                fail_msg("%s pass %d, %d of %d: e %d lsb %d zero %d, want %d %d %d", label, pass, o, outer, f.e[o],
                         f.lsb[o], int(f.zero[o]), e, lsb, int(mx == 0));
            if (mx == 0) continue;
            const double n1 = s1 * (1 + 0x1p-20) + 0x1p-900;
            const int nu = ceil_log2(std::sqrt(s2 * (1 + 0x1p-20) + 0x1p-900) * (1 + 0x1p-50));
            if (f.n1[o] != n1 || f.nu[o] != nu)
                fail_msg("%s pass %d, %d: n1 %a nu %d, want %a %d", label, pass, o, f.n1[o], f.nu[o], n1, nu);
        }
        assert_true(f.any_nonzero == any);
    }
}

// The facts pass (int8_facts.cc) against its definition: rows (columns) stored along K and
// across it, zero rows, powers of two, subnormals (rows scaled by more than 2^1022 included),
// entries near the overflow threshold and low set bits anywhere. Inf or NaN anywhere forwards.
void test_operand_facts_match_definition(void**) {
    kt::Rng r(23);
    for (int trial = 0; trial < 24; ++trial) {
        const int rows = 1 + r.below(300), cols = 1 + r.below(90);
        const std::int64_t ld = rows + r.below(3);
        std::vector<double> x(std::size_t(ld) * cols);
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) {
                double v = r.uniform();
                switch ((i * 7 + j * 3 + trial) % 9) {
                    case 0: v = 0; break;
                    case 1: v = std::ldexp(1.0, r.below(200) - 100); break;                 // a power of two
                    case 2: v = std::ldexp(double(1 + r.below(1 << 20)), -1074); break;     // subnormal
                    case 3: v = std::ldexp(v, 1000 + r.below(23)); break;                  // near the top
                    case 4: v = std::ldexp(double(r.next() >> 11), r.below(60) - 80); break;  // low bits
                    default: break;
                }
                if (i % 37 == 5) v = 0;                                                  // zero rows
                if (i % 41 == 7) v = std::ldexp(double(1 + r.below(1000)), -1074);        // tiny rows
                x[std::size_t(j) * ld + i] = (r.below(2) ? -1 : 1) * v;
            }
        char label[32];
        std::snprintf(label, sizeof label, "trial %d", trial);
        check_facts_match_definition(x, rows, cols, ld, 1 + trial % 3, label);
        // One Inf or NaN anywhere: the pass refuses, whichever the order.
        const std::size_t at_bad = std::size_t(r.below(cols)) * ld + r.below(rows);
        x[at_bad] = trial % 2 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::quiet_NaN();
        for (int pass = 0; pass < 2; ++pass) {
            OperandView<double> v{'N', rows, cols, x.data(), ld};
            Int8OperandFacts f;
            const char* why = int8_operand_facts(v, pass == 0, 2, &f);
            assert_non_null(why);
            assert_string_equal(why, "domain:nonfinite");
        }
    }
}

// The facts of a complex view (complex_gemm.cc's A' by rows, B' by columns) against their
// definition through element(), the packer's own reading of the view: the magnitudes are copied
// chunk by chunk into rows along K (int8_facts.cc complex_magnitudes), so the chunks' seams,
// both storage orders, 'C', zero rows and rows scaled below 2^-1022 (the generic path) are
// exercised; the sums must come out in K order to the bit.
void test_complex_facts_match_definition(void**) {
    kt::Rng r(41);
    for (int trial = 0; trial < 12; ++trial) {
        const bool is_a = trial % 2 == 0;
        const char trans = "NTC"[(trial / 2) % 3];
        const int outer_c = 1 + r.below(trial < 6 ? 300 : 40), k = 1 + r.below(trial < 6 ? 120 : 400);
        // op(A) is outer_c x k (complex), op(B) k x outer_c; stored untransposed for 'N'.
        const bool stored_n = trans == 'N';
        const int srows = is_a ? (stored_n ? outer_c : k) : (stored_n ? k : outer_c);
        const int scols = is_a ? (stored_n ? k : outer_c) : (stored_n ? outer_c : k);
        const std::int64_t ld = srows + r.below(3);
        std::vector<double> x(2 * std::size_t(ld) * scols, 0.0);
        for (int j = 0; j < scols; ++j)
            for (int i = 0; i < srows; ++i)
                for (int part = 0; part < 2; ++part) {
                    double v = r.uniform();
                    switch ((i * 5 + j * 3 + part + trial) % 7) {
                        case 0: v = 0; break;
                        case 1: v = std::ldexp(v, r.below(80) - 40); break;
                        case 2: v = std::ldexp(double(r.next() >> 11), r.below(60) - 100); break;
                        default: break;
                    }
                    const int outer_index = is_a == stored_n ? i : j;  // the entry's op(A) row or op(B) column
                    if (outer_index % 23 == 4) v = 0;                                          // zero rows
                    if (outer_index % 29 == 9) v = std::ldexp(double(1 + r.below(1000)), -1074);  // tiny rows
                    x[2 * (std::size_t(j) * ld + i) + part] = v;
                }
        const OperandView<double> v = is_a ? OperandView<double>{trans, outer_c, 2 * k, x.data(), ld, Interleave::complex_a}
                                           : OperandView<double>{trans, 2 * k, 2 * outer_c, x.data(), ld, Interleave::complex_b};
        Int8OperandFacts f;
        assert_null(int8_operand_facts(v, is_a, 1 + trial % 2, &f));
        const int outer = is_a ? v.rows : v.cols, depth = is_a ? v.cols : v.rows;
        for (int o = 0; o < outer; ++o) {
            double mx = 0;
            int lsb = kLsbNone;
            for (int l = 0; l < depth; ++l) {
                const double a = std::fabs(is_a ? element(v, o, l) : element(v, l, o));
                mx = std::max(mx, a);
                if (a == 0) continue;
                int ex;
                const double m = std::frexp(a, &ex);
                lsb = std::min(lsb, ex - 53 + __builtin_ctzll(std::uint64_t(std::ldexp(m, 53))));
            }
            const int e = mx != 0 ? ceil_log2(mx) : 0;
            double s1 = 0, s2 = 0;
            for (int l = 0; l < depth; ++l) {
                const double a = std::ldexp(std::fabs(is_a ? element(v, o, l) : element(v, l, o)), -e);
                s1 += a;
                s2 += a * a;
            }
            if (f.e[o] != e || f.lsb[o] != lsb || f.zero[o] != (mx == 0))
                fail_msg("trial %d (%s %c), %d of %d: e %d lsb %d zero %d, want %d %d %d", trial, is_a ? "A'" : "B'", trans,
                         o, outer, f.e[o], f.lsb[o], int(f.zero[o]), e, lsb, int(mx == 0));
            if (mx == 0) continue;
            const double n1 = s1 * (1 + 0x1p-20) + 0x1p-900;
            const int nu = ceil_log2(std::sqrt(s2 * (1 + 0x1p-20) + 0x1p-900) * (1 + 0x1p-50));
            if (f.n1[o] != n1 || f.nu[o] != nu)
                fail_msg("trial %d (%s %c), %d: n1 %a nu %d, want %a %d", trial, is_a ? "A'" : "B'", trans, o, f.n1[o],
                         f.nu[o], n1, nu);
        }
    }
}

// Rows contiguous in memory take their sums unscaled in the extremes' read and scale them after
// (int8_facts.cc, unscaled_sums_exact): rows on either side of each of its limits, whose sums
// the rescaling gets wrong where the row is let through past one (a square that is subnormal
// scaled but not unscaled, or the reverse, loses bits in one and not the other).
void test_operand_facts_one_read_limits(void**) {
    kt::Rng r(29);
    const int rows = 96, cols = 77;
    const std::int64_t ld = rows + 3;
    std::vector<double> x(std::size_t(ld) * cols);
    for (int trial = 0; trial < 4; ++trial) {
        for (int i = 0; i < rows; ++i) {
            // the row's largest |x|, 3/4 2^e, and the class of its other values
            int e = 0;
            const int kind = (i + trial) % 8;
            switch (kind) {
                case 1: case 2: e = 300; break;  // one value at 2^(e - 511), or below it
                case 3: e = 480; break;          // the largest allowed
                case 4: e = 481; break;          // past it
                case 5: e = -515; break;         // squares below 2^-1022 unscaled
                case 6: e = -500; break;         // the least allowed
                default: e = r.below(64) - 32; break;
            }
            for (int j = 0; j < cols; ++j) {
                // 52 random bits of significand, so that a subnormal square loses some
                const double sig = 1 + std::ldexp(double(r.next() >> 12), -52);
                double v = std::ldexp(sig, e - 1 - r.below(kind == 6 ? 10 : 20));
                if (kind == 1 && j % 5 == 0) v = std::ldexp(1.0, e - 511);
                if (kind == 2 && j % 5 == 0) v = std::ldexp(sig, e - 540 + r.below(28));
                if (kind == 5) v = std::ldexp(sig, e - 8 - r.below(10));
                if (kind == 6 && j % 3 == 0) v = std::ldexp(1.0, -511);
                if (kind == 7) v = j % 2 ? 0.0 : v;
                if (trial == 3 && i % 11 == 4) v = 0;  // zero rows
                x[std::size_t(j) * ld + i] = (r.below(2) ? -1 : 1) * v;
            }
            x[std::size_t(i % cols) * ld + i] = 0.75 * std::ldexp(1.0, e);
            if (trial == 3 && i % 11 == 4) x[std::size_t(i % cols) * ld + i] = 0;
        }
        char label[32];
        std::snprintf(label, sizeof label, "one read, trial %d", trial);
        check_facts_match_definition(x, rows, cols, ld, 1 + trial % 2, label);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (const int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moduli_coprime_and_ranges),
        cmocka_unit_test(test_round_to_double),
        cmocka_unit_test(test_operand_facts_match_definition),
        cmocka_unit_test(test_operand_facts_one_read_limits),
        cmocka_unit_test(test_complex_facts_match_definition),
        cmocka_unit_test(test_times_pow2_is_ldexp),
        cmocka_unit_test(test_block_row_test_is_per_entry),
        cmocka_unit_test(test_every_count_failure_is_its_definition),
        cmocka_unit_test(test_crt_recovers_exactly),
        cmocka_unit_test(test_uniform_certified),
        cmocka_unit_test(test_transposes_and_fixed_counts),
        cmocka_unit_test(test_log_uniform_certified),
        cmocka_unit_test(test_wide_ranges_and_exact_inputs),
        cmocka_unit_test(test_structural_zeros),
        cmocka_unit_test(test_uncertifiable_forwarded),
        cmocka_unit_test(test_digits_bound_looked_at_again),
        cmocka_unit_test(test_bitwise_threads_and_chunks),
        cmocka_unit_test(test_set_without_int8_product),
        cmocka_unit_test(test_zgemm_certified),
        cmocka_unit_test(test_nonfinite_forwarded),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

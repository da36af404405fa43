// The INT8 engine's residue and digit loops (kernels/isa/int8_residue_loops.h) of the
// instruction set under test (AMXBLAS_TEST_ISA) against their definition in 64- and 128-bit
// integer arithmetic: every modulus, integers up to 2^91 of both signs, the rounding of
// non-integers (ties included), the digits' floor and cap, the fold of a chunk's sums, the
// reconstruction's sums and the certificate's block-row test.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka.h declares print_error (fail_msg) without C linkage of its own.
extern "C" {
#include <cmocka.h>
}

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/int8/crt_basis.h"
#include "kernels/int8/crt_reconstruct.h"
#include "tests/common/rng.h"
#include "tests/kernels/isa_under_test.h"

using namespace amxblas::kernels;
using detail::kInt8BlockValues;

namespace {

Isa g_isa = Isa::portable;

// round(x) to nearest, ties to even, as an exact 128-bit integer (x an integer above 2^52).
__int128 exact_round(double x) {
    if (std::fabs(x) >= 0x1p52) {
        int e;
        const double f = std::frexp(x, &e);
        return __int128(std::int64_t(std::ldexp(f, 53))) * (__int128(1) << (e - 53));  // no shift of a negative
    }
    return __int128(std::nearbyint(x));
}

int symmetric_residue(__int128 q, int m) {
    int r = int(q % m);
    if (m == 256) {
        r = (r + 256) % 256;
        return r > 127 ? r - 256 : r;
    }
    r += r < -(m / 2) ? m : 0;
    r -= r > m / 2 ? m : 0;
    return r;
}

void test_residues_match_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    const CrtBasis& basis = crt_basis(kInt8MaxModuli);
    amxblas::test::Rng r(17);
    std::vector<double> v(kInt8BlockValues);
    std::vector<std::vector<std::int8_t>> out(basis.count, std::vector<std::int8_t>(kInt8BlockValues + 64));
    std::int8_t* ptr[kInt8MaxModuli];
    for (int l = 0; l < basis.count; ++l) ptr[l] = out[l].data();
    for (int round = 0; round < 40; ++round) {
        for (int i = 0; i < kInt8BlockValues; ++i) {
            const int e = int(std::fabs(r.uniform()) * 92);
            double x = std::ldexp(r.uniform(), e);
            if (i % 17 == 0) x = std::floor(x) + 0.5;                   // a tie
            if (i % 29 == 0) x = std::ldexp(r.uniform() > 0 ? 1 : -1, 91) * (1 - 0x1p-53);  // the largest
            if (i % 31 == 0) x = 0;
            v[i] = x;
        }
        loops.residues(v.data(), basis, ptr, 64);
        for (int l = 0; l < basis.count; ++l)
            for (int i = 0; i < kInt8BlockValues; ++i) {
                const int want = symmetric_residue(exact_round(v[i]), basis.m[l]);
                if (out[l][64 + i] != want)
                    fail_msg("isa %s: round(%.17g) mod %d = %d, want %d", isa_name(g_isa), v[i], basis.m[l],
                             out[l][64 + i], want);
            }
    }
}

void test_digits_floor_and_cap(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(5);
    std::vector<double> v(kInt8BlockValues);
    std::vector<std::int8_t> out(kInt8BlockValues);
    for (int i = 0; i < kInt8BlockValues; ++i) {
        v[i] = r.uniform() * 128;
        if (i % 13 == 0) v[i] = std::trunc(v[i]);      // exact integers: their own floor
        if (i % 13 == 1) v[i] = std::trunc(v[i]) + 0.5;  // halves: the floor, not the even neighbour
        if (i % 101 == 0) v[i] = i % 2 ? 128 : -128;      // the cap
    }
    loops.digits(v.data(), out.data(), 0);
    for (int i = 0; i < kInt8BlockValues; ++i) {
        const double want = std::min(127.0, std::floor(std::fabs(v[i])));
        assert_int_equal(out[i], int(want));
    }
}

// The fold of a K chunk's sums into the kept residues, first chunk or not, every modulus,
// sums up to the 2^27 a chunk can reach, a row stride wider than the tile; times 1, and the
// last chunk's factor q_l (the largest, 255, too).
void test_fold_matches_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    const CrtBasis& basis = crt_basis(kInt8MaxModuli);
    amxblas::test::Rng r(23);
    constexpr int kLd = 40;
    std::vector<std::int32_t> sum(32 * 32);
    std::vector<std::int8_t> dst(32 * kLd), before(32 * kLd);
    for (int l = 0; l < basis.count; ++l)
        for (int variant = 0; variant < 6; ++variant) {
            const int first = variant & 1, times = variant < 2 ? 1 : variant < 4 ? basis.q[l] : 255;
            const int m = basis.m[l];
            for (int i = 0; i < 32 * 32; ++i) sum[i] = std::int32_t(r.uniform() * 0x1p27);
            sum[0] = (1 << 27) - 1;
            sum[1] = -(1 << 27);
            for (auto& d : dst) d = std::int8_t(symmetric_residue(__int128(r.uniform() * 1000), m));
            before = dst;
            loops.fold(m, sum.data(), first != 0, times, dst.data(), kLd);
            for (int i = 0; i < 32; ++i)
                for (int j = 0; j < kLd; ++j) {
                    const std::int8_t got = dst[i * kLd + j];
                    if (j >= 32) {
                        assert_int_equal(got, before[i * kLd + j]);  // outside the tile: untouched
                        continue;
                    }
                    const __int128 x = (__int128(sum[i * 32 + j]) + (first ? 0 : before[i * kLd + j])) * times;
                    assert_int_equal(got, symmetric_residue(x, m));
                }
        }
}

// The reconstruction's sums, every count of moduli (so every number of limbs), a full row of
// entries and a short one, y at the extremes of its range included: against 128-bit sums.
void test_crt_sums_match_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(37);
    constexpr int kStride = kCrtRow + 8;
    std::vector<std::int8_t> y(std::size_t(kInt8MaxModuli) * kStride);
    std::vector<double> frac(kCrtRow), limb(std::size_t(kCrtLimbs) * kCrtRow);
    for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) {
        const CrtBasis& b = crt_basis(c);
        for (int count : {kCrtRow, 37}) {
            for (int l = 0; l < c; ++l)
                for (int e = 0; e < kStride; ++e) {
                    const int half = b.m[l] / 2;
                    int v = int(r.uniform() * (half + 1));
                    if (e % 11 == 0) v = b.m[l] == 256 ? -128 : half;
                    if (e % 13 == 0) v = -half;
                    y[std::size_t(l) * kStride + e] = std::int8_t(std::max(-128, std::min(127, v)));
                }
            loops.crt_sums(b, y.data(), kStride, count, frac.data(), limb.data());
            for (int e = 0; e < count; ++e) {
                double want_frac = 0;
                for (int l = 0; l < c; ++l) want_frac += y[std::size_t(l) * kStride + e] * b.inv_m[l];
                if (frac[e] != want_frac) fail_msg("isa %s, %d moduli: frac[%d] %.17g, want %.17g", isa_name(g_isa), c, e, frac[e], want_frac);
                for (int j = 0; j < b.limbs; ++j) {
                    __int128 want = 0;
                    for (int l = 0; l < c; ++l)
                        want += __int128(y[std::size_t(l) * kStride + e]) * __int128(b.w_limb[l][j]);
                    if (limb[std::size_t(j) * kCrtRow + e] != double(want))
                        fail_msg("isa %s, %d moduli: limb %d of entry %d is %.17g, want %.17g", isa_name(g_isa), c, j, e,
                                 limb[std::size_t(j) * kCrtRow + e], double(want));
                }
            }
        }
    }
}

// The certificate's block-row test of one count (row_counts) against its definition entry by
// entry, the expression of Int8BlockCertificate::passes() in scalar code: rows of every length
// up to 300 (vector tails), flags on and off, right-hand sides about lhs (passes, fails, ties),
// lhs = 0 both ways, uncounted entries, and a margin that some entries lower.
void test_row_counts_match_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(41);
    constexpr double kUp = (1 + 0x1p-53) * (1 + 0x1p-30);
    for (int trial = 0; trial < 400; ++trial) {
        const int nc = trial < 300 ? trial + 1 : 1 + r.below(300);
        std::vector<double> n1b(nc), nub(nc), thr(nc), rhs(nc), tight(nc), counted(nc);
        detail::Int8RowTest t{};
        t.hb = double(r.below(40));
        t.pax = trial % 7 == 0 ? 0.0 : std::ldexp(1.0, -r.below(60));
        t.pby = std::ldexp(r.uniform01() + 0.5, -r.below(60));
        t.pabz = trial % 5 == 0 ? 0.0 : std::ldexp(r.uniform01() + 0.5, -r.below(90));
        t.mc = std::ldexp(r.uniform01() + 0.5, r.below(8));
        t.zero_passes = trial % 2 == 0;
        for (int j = 0; j < nc; ++j) {
            n1b[j] = r.below(4) == 0 ? 0.0 : std::ldexp(r.uniform01() + 0.5, r.below(20));
            nub[j] = std::ldexp(1.0, r.below(12));
            thr[j] = double(r.below(50));
            counted[j] = r.below(10) == 0 ? 0.0 : 1.0;
        }
        t.n1b = n1b.data();
        t.nub = nub.data();
        t.thr = thr.data();
        std::vector<double> lhs(nc);
        for (int j = 0; j < nc; ++j) {
            const double fb = t.hb < thr[j] ? 1.0 : 0.0;
            lhs[j] = ((t.pax * n1b[j] + fb * (t.pby * nub[j])) + fb * (t.pabz * nub[j])) * kUp;
            // About lhs: above, below, equal, or unrelated; the tight side far below.
            const int pick = r.below(4);
            rhs[j] = pick == 0 ? lhs[j] : pick == 1 ? lhs[j] * 1.5 : pick == 2 ? lhs[j] * 0.75 : r.uniform01();
            tight[j] = r.below(3) == 0 ? lhs[j] : rhs[j] * 0x1p-20;
        }
        t.rhs = rhs.data();
        t.tight_rhs = tight.data();
        t.counted = counted.data();
        double want_failing = 0, want_loose = 0, want_lower = 0;
        for (int j = 0; j < nc; ++j) {
            const bool ok = lhs[j] == 0 ? t.zero_passes : lhs[j] <= rhs[j];
            const double counted_ok = ok ? counted[j] : 0.0;
            want_failing += counted[j] - counted_ok;
            want_loose += lhs[j] <= tight[j] ? 0.0 : counted_ok;
            want_lower += rhs[j] < t.mc * lhs[j] ? counted_ok : 0.0;
        }
        double failing = -1, loose = -1, lower = -1;
        loops.row_counts(nc, t, &failing, &loose, &lower);
        if (failing != want_failing || loose != want_loose || lower != want_lower)
            fail_msg("isa %s, trial %d (nc %d): failing %g loose %g lower %g, want %g %g %g", isa_name(g_isa), trial, nc,
                     failing, loose, lower, want_failing, want_loose, want_lower);
    }
}

}  // namespace

int main() {
    g_isa = amxblas::test::isa_under_test("kernels_int8_residues_test");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_residues_match_definition),
        cmocka_unit_test(test_digits_floor_and_cap),
        cmocka_unit_test(test_fold_matches_definition),
        cmocka_unit_test(test_crt_sums_match_definition),
        cmocka_unit_test(test_row_counts_match_definition),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// The INT8 engine's residue and digit loops (kernels/isa/int8_residue_loops.h) of the
// instruction set under test (AMXBLAS_TEST_ISA) against their definition in 64- and 128-bit
// integer arithmetic: every modulus, integers up to 2^91 of both signs, the rounding of
// non-integers (ties included), the digits' floor and cap, the fold of a chunk's sums, the
// reconstruction of a row (ties included), the certificate's block-row test and the gather of
// whole blocks.
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
#include <cstring>
#include <vector>

#include "kernels/common/pow2.h"
#include "kernels/int8/crt_basis.h"
#include "kernels/int8/crt_reconstruct.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/runtime/cpu_features.h"
#include "tests/common/rng.h"
#include "tests/kernels/isa/isa_under_test.h"

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

// Every basis of kInt8MinModuli to kInt8MaxModuli moduli, on values up to the largest its calls
// can give (|q| < 2^(h - 1), h the larger half of its range, docs/fp64-int8.md, Section 2): on
// the avx512 build, where the CPU has AVX-512 VNNI, the bases of up to 16 moduli take the
// residues from the values' bytes (int8_residues_vnni.h), the larger ones the FP64 loop.
void test_residues_of_every_basis(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    if (g_isa == Isa::avx512 && !cpu_has_avx512_vnni())
        print_message("no AVX-512 VNNI here: the avx512 run checks its FP64 loop, not the VNNI one\n");
    amxblas::test::Rng r(29);
    std::vector<double> v(kInt8BlockValues);
    for (int count = kInt8MinModuli; count <= kInt8MaxModuli; ++count) {
        const CrtBasis& basis = crt_basis(count);
        const int h = basis.range_bits - basis.range_bits / 2;
        std::vector<std::vector<std::int8_t>> out(basis.count, std::vector<std::int8_t>(kInt8BlockValues + 32));
        std::int8_t* ptr[kInt8MaxModuli];
        for (int l = 0; l < basis.count; ++l) ptr[l] = out[l].data();
        for (int round = 0; round < 8; ++round) {
            for (int i = 0; i < kInt8BlockValues; ++i) {
                const int e = int(std::fabs(r.uniform()) * (h - 1));
                double x = std::ldexp(r.uniform(), e);
                if (i % 13 == 0) x = std::floor(x) + 0.5;                                   // a tie
                if (i % 23 == 0) x = std::ldexp(r.uniform() > 0 ? 1 : -1, h - 1) * (1 - 0x1p-53);  // the largest
                if (i % 37 == 0) x = i % 2 ? -0.0 : 0.0;
                if (i % 41 == 0) x = (i % 2 ? -1 : 1) * (std::floor(std::fabs(x)) + 255.5);  // a tie past a byte
                v[i] = x;
            }
            loops.residues(v.data(), basis, ptr, 32);
            for (int l = 0; l < basis.count; ++l)
                for (int i = 0; i < kInt8BlockValues; ++i) {
                    const int want = symmetric_residue(exact_round(v[i]), basis.m[l]);
                    if (out[l][32 + i] != want)
                        fail_msg("isa %s, %d moduli: round(%.17g) mod %d = %d, want %d", isa_name(g_isa), count, v[i],
                                 basis.m[l], out[l][32 + i], want);
                }
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
// last chunk's factor q_l (the largest, 255, too); in place, and from another buffer.
void test_fold_matches_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    const CrtBasis& basis = crt_basis(kInt8MaxModuli);
    amxblas::test::Rng r(23);
    constexpr int kLd = 40, kSrcLd = 48;
    std::vector<std::int32_t> sum(32 * 32);
    std::vector<std::int8_t> dst(32 * kLd), before(32 * kLd), other(32 * kSrcLd);
    for (int l = 0; l < basis.count; ++l)
        for (int variant = 0; variant < 12; ++variant) {
            const int first = variant & 1, times = variant % 6 < 2 ? 1 : variant % 6 < 4 ? basis.q[l] : 255;
            const bool in_place = variant < 6;  // else read from another buffer (other row stride)
            const int m = basis.m[l];
            for (int i = 0; i < 32 * 32; ++i) sum[i] = std::int32_t(r.uniform() * 0x1p27);
            sum[0] = (1 << 27) - 1;
            sum[1] = -(1 << 27);
            for (auto& d : dst) d = std::int8_t(symmetric_residue(__int128(r.uniform() * 1000), m));
            for (auto& d : other) d = std::int8_t(symmetric_residue(__int128(r.uniform() * 1000), m));
            before = dst;
            const std::int8_t* src = in_place ? dst.data() : other.data();
            loops.fold(m, sum.data(), first != 0, times, src, in_place ? kLd : kSrcLd, dst.data(), kLd);
            for (int i = 0; i < 32; ++i)
                for (int j = 0; j < kLd; ++j) {
                    const std::int8_t got = dst[i * kLd + j];
                    if (j >= 32) {
                        assert_int_equal(got, before[i * kLd + j]);  // outside the tile: untouched
                        continue;
                    }
                    const int in = in_place ? before[i * kLd + j] : other[i * kSrcLd + j];
                    const __int128 x = (__int128(sum[i * 32 + j]) + (first ? 0 : in)) * times;
                    assert_int_equal(got, symmetric_residue(x, m));
                }
        }
}

// An integer |P| < 2^192 as its magnitude's 64-bit words and a sign.
struct BigInt {
    std::uint64_t w[3] = {0, 0, 0};
    bool negative = false;

    void set_bit(int bit) { w[bit / 64] |= std::uint64_t(1) << (bit % 64); }
    // The bits [from, from + count) of the magnitude := v (count <= 64, v below 2^count).
    void set_bits(int from, int count, std::uint64_t v) {
        for (int i = 0; i < count; ++i)
            if ((v >> i) & 1) set_bit(from + i);
    }
    Wide wide() const {  // two's complement, modulo 2^192
        Wide r;
        unsigned __int128 carry = negative ? 1 : 0;
        for (int i = 0; i < 3; ++i) {
            const unsigned __int128 t = (unsigned __int128)(negative ? ~w[i] : w[i]) + carry;
            r.w[i] = std::uint64_t(t);
            carry = t >> 64;
        }
        return r;
    }
    int mod(int m) const {  // P mod m, in [0, m)
        unsigned __int128 r = 0;
        for (int i = 2; i >= 0; --i) r = ((r << 64) | w[i]) % unsigned(m);
        const int v = int(r);
        return negative && v ? m - v : v;
    }
};

// Integers below 2^bits of both signs that the reconstruction's rounding turns on: random ones
// of every length; ties at 53 bits, alone and with 1 added or taken below them; values at and
// about 2^(40 j), where the top limb changes; and values built 40 bits at a time from 0, 2^39,
// 2^39 - 1, 2^40 - 1 and random limbs, whose balanced limbs change sign.
BigInt reconstruction_case(amxblas::test::Rng& r, int bits, int kind) {
    BigInt x;
    x.negative = r.below(2) == 1;
    switch (kind) {
        case 0: {  // random, of a random length
            const int len = 1 + r.below(bits);
            for (int b = 0; b < len; b += 32) x.set_bits(b, std::min(32, len - b), r.next() >> (64 - std::min(32, len - b)));
            x.set_bit(len - 1);
            break;
        }
        case 1: {  // a tie: 53 bits, then a 1, then shift zeros; maybe +-1 at the bottom
            if (bits < 55) return reconstruction_case(r, bits, 0);
            const int shift = 1 + r.below(bits - 54);
            x.set_bits(shift + 1, 52, r.next() >> 12);
            x.set_bit(shift + 53);
            x.set_bit(shift);
            const int nudge = r.below(3);  // nothing, +1, -1 at bit 0
            if (nudge == 1) x.set_bit(0);
            if (nudge == 2) {  // ...1000 - 1 = ...0111
                x.w[shift / 64] &= ~(std::uint64_t(1) << (shift % 64));
                for (int bit = 0; bit < shift; ++bit) x.set_bit(bit);
            }
            break;
        }
        case 2: {  // about 2^(40 j)
            const int j = 1 + r.below(std::max(1, (bits - 1) / 40));
            if (40 * j >= bits) return reconstruction_case(r, bits, 0);
            const int which = r.below(4);
            if (which == 0) x.set_bit(40 * j);                                        // 2^(40 j)
            if (which == 1) for (int b = 0; b < 40 * j; ++b) x.set_bit(b);            // 2^(40 j) - 1
            if (which == 2) x.set_bit(40 * j), x.set_bit(0);                          // 2^(40 j) + 1
            if (which == 3) x.set_bit(40 * j), x.set_bit(40 * j - 1);                 // 1.5 2^(40 j)
            break;
        }
        default: {  // 40-bit limbs from a few patterns
            for (int b = 0; b < bits; b += 40) {
                const int len = std::min(40, bits - b);
                const std::uint64_t pick[5] = {0, std::uint64_t(1) << 39, (std::uint64_t(1) << 39) - 1,
                                               (std::uint64_t(1) << 40) - 1, r.next() >> 24};
                x.set_bits(b, len, pick[r.below(5)] & (~std::uint64_t(0) >> (64 - len)));
            }
            break;
        }
    }
    return x;
}

// The whole reconstruction of a row, every count of moduli (so every number of limbs), a full
// row and a short one: fl(P) from P's symmetric y_l, against round_to_double of P (128-bit
// integer arithmetic, kernels/int8/crt_reconstruct.cc), bit for bit, on the cases above; and
// fl(P) scaled by powers of two, against times_pow2 of it.
void test_crt_row_matches_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(37);
    constexpr int kStride = kCrtRow + 8;
    std::vector<std::int8_t> y(std::size_t(kInt8MaxModuli) * kStride);
    std::vector<BigInt> p(kStride);
    std::vector<double> out(kCrtRow);
    std::vector<int> exponent(kStride);
    for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) {
        const CrtBasis& b = crt_basis(c);
        for (int trial = 0; trial < 40; ++trial) {
            const int count = trial % 8 == 3 ? 37 : trial % 8 == 7 ? 29 : kCrtRow;  // tails of 16, 8 and 1
            for (int e = 0; e < kStride; ++e) {
                p[e] = e == 0 ? BigInt{} : reconstruction_case(r, b.range_bits, (e + trial) % 4);
                for (int l = 0; l < c; ++l) {
                    const int m = b.m[l];
                    int v = int((long(p[e].mod(m)) * b.q[l]) % m);  // in [0, m); then symmetric
                    v -= v > (m - 1) / 2 ? m : 0;
                    y[std::size_t(l) * kStride + e] = std::int8_t(v);
                }
            }
            // Half the trials scale the results by 2^exponent: exponents that keep them normal,
            // take them subnormal (a second rounding), to zero, past 2^1023, and beyond the range
            // of a normal power of two (ldexp's path).
            const bool scaled = trial % 2 == 1;
            for (int e = 0; e < kStride; ++e)
                exponent[e] = trial % 4 == 1 ? int(r.below(400)) - 200 : int(r.below(2600)) - 1300;
            loops.crt_row(b, y.data(), kStride, count, scaled ? exponent.data() : nullptr, out.data());
            for (int e = 0; e < count; ++e) {
                const double fl = round_to_double(p[e].wide());
                const double want = !scaled ? fl : fl == 0 ? 0.0 : times_pow2(fl, exponent[e]);
                if (std::memcmp(&out[e], &want, sizeof want) != 0)
                    fail_msg("isa %s, %d moduli, entry %d (words %016llx %016llx %016llx, %s): %a, want %a",
                             isa_name(g_isa), c, e, (unsigned long long)p[e].w[2], (unsigned long long)p[e].w[1],
                             (unsigned long long)p[e].w[0], p[e].negative ? "negative" : "positive", out[e], want);
            }
        }
    }
}

// The certificate's block-row test of one count (row_counts) against its definition entry by
// entry, the expression of Int8BlockCertificate::passes() in scalar code: rows of every length
// up to 300 (vector tails), flags on and off, right-hand sides about lhs (passes, fails, ties),
// lhs = 0 both ways, uncounted entries (lhat 0), tight sides at and far below the test's, and a
// margin that some entries lower.
void test_row_counts_match_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(41);
    constexpr double kUp = (1 + 0x1p-53) * (1 + 0x1p-30);
    for (int trial = 0; trial < 400; ++trial) {
        const int nc = trial < 300 ? trial + 1 : 1 + r.below(300);
        std::vector<double> n1b(nc), nub(nc), thr(nc), lhat(nc);
        detail::Int8RowTest t{};
        t.hb = double(r.below(40));
        t.pax = trial % 7 == 0 ? 0.0 : std::ldexp(1.0, -r.below(60));
        t.pby = std::ldexp(r.uniform01() + 0.5, -r.below(60));
        t.pabz = trial % 5 == 0 ? 0.0 : std::ldexp(r.uniform01() + 0.5, -r.below(90));
        t.mc = std::ldexp(r.uniform01() + 0.5, r.below(8));
        t.zero_passes = trial % 2 == 0;
        // Powers of two, so that rhs = lhs exactly where lhat is picked for it.
        t.rhs_factor = 0x1p-14;
        t.tight_factor = trial % 4 == 0 ? t.rhs_factor : 0x1p-34;
        for (int j = 0; j < nc; ++j) {
            n1b[j] = r.below(4) == 0 ? 0.0 : std::ldexp(r.uniform01() + 0.5, r.below(20));
            nub[j] = std::ldexp(1.0, r.below(12));
            thr[j] = double(r.below(50));
        }
        t.n1b = n1b.data();
        t.nub = nub.data();
        t.thr = thr.data();
        std::vector<double> lhs(nc);
        for (int j = 0; j < nc; ++j) {
            const double fb = t.hb < thr[j] ? 1.0 : 0.0;
            lhs[j] = ((t.pax * n1b[j] + fb * (t.pby * nub[j])) + fb * (t.pabz * nub[j])) * kUp;
            // rhs about lhs: equal, above, below, or unrelated; or not counted.
            const int pick = r.below(5);
            const double rhs = pick == 0 ? lhs[j] : pick == 1 ? lhs[j] * 1.5 : pick == 2 ? lhs[j] * 0.75 : r.uniform01();
            lhat[j] = r.below(10) == 0 ? 0.0 : rhs / t.rhs_factor;
        }
        t.lhat = lhat.data();
        detail::Int8RowCounts want;
        for (int j = 0; j < nc; ++j) {
            const double counted = lhat[j] != 0 ? 1.0 : 0.0, rhs = t.rhs_factor * lhat[j];
            const bool ok = lhs[j] == 0 ? t.zero_passes : lhs[j] <= rhs;
            const double counted_ok = ok ? counted : 0.0;
            want.counted += counted;
            want.failing += counted - counted_ok;
            want.loose += lhs[j] <= t.tight_factor * lhat[j] ? 0.0 : counted_ok;
            want.lower_margin += rhs < t.mc * lhs[j] ? counted_ok : 0.0;
        }
        detail::Int8RowCounts got{-1, -1, -1, -1};
        loops.row_counts(nc, t, &got);
        if (got.counted != want.counted || got.failing != want.failing || got.loose != want.loose ||
            got.lower_margin != want.lower_margin)
            fail_msg("isa %s, trial %d (nc %d): counted %g failing %g loose %g lower %g, want %g %g %g %g",
                     isa_name(g_isa), trial, nc, got.counted, got.failing, got.loose, got.lower_margin,
                     want.counted, want.failing, want.loose, want.lower_margin);
    }
}

// The facts pass's loops (int8_facts.cc) against their definition, both storage orders: each
// row's largest |x|, least lowest set bit (a power of two; +inf for an all-zero row) and
// finiteness, and the sums of |x| scale and its squares in K order, bit for bit. Rows mix
// magnitudes over 2^-1074 .. 2^1000, subnormals, zeros, an all-zero row, Inf and NaN; depths
// not a multiple of the lanes; an odd row count (the interleaved chains' tail).
void test_facts_match_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(31);
    const auto lowest = [](double v) {  // 2^(exponent of v's lowest set bit)
        int e;
        double f = std::frexp(v, &e);
        while (f != std::trunc(f)) f *= 2, --e;
        while (std::fmod(f, 2) == 0) f /= 2, ++e;
        return std::ldexp(1.0, e);
    };
    for (int trial = 0; trial < 24; ++trial) {
        const bool contiguous = trial % 2 == 0;
        const int count = 13 + trial, depth = 37 + 5 * trial, o0 = 3;
        const int outer = o0 + count;
        const std::size_t ld = contiguous ? std::size_t(outer + 5) : std::size_t(depth + 3);
        std::vector<double> x((contiguous ? std::size_t(depth) : std::size_t(outer)) * ld, 7.0);
        const auto at = [&](int o, int l) -> double& { return contiguous ? x[o + l * ld] : x[o * ld + l]; };
        for (int o = o0; o < outer; ++o)
            for (int l = 0; l < depth; ++l) {
                const int kind = int(std::fabs(r.uniform()) * 20);
                double v = std::ldexp(r.uniform(), int(r.uniform() * 60) - (o % 5 == 1 ? 1040 : 0));
                if (kind == 0) v = 0;
                if (kind == 1) v = std::ldexp(1.0, -1074) * double(1 + int(std::fabs(r.uniform()) * 9));
                if (kind == 2) v = std::ldexp(r.uniform(), 1000);
                if (o == o0 + 4) v = 0;  // an all-zero row
                at(o, l) = v;
            }
        if (trial % 3 == 0) at(o0 + 2, depth / 2) = INFINITY;
        if (trial % 3 == 1) at(o0 + 6, depth - 1) = -NAN;
        std::vector<double> mx(count), low(count), fin(count), scale(count), s1(count, 0.5), s2(count, 0.25);
        loops.extremes(x.data(), ld, contiguous, o0, count, depth, mx.data(), low.data(), fin.data());
        for (int i = 0; i < count; ++i) {
            double want_mx = 0, want_low = INFINITY, want_fin = 1;
            for (int l = 0; l < depth; ++l) {
                const double v = std::fabs(at(o0 + i, l));
                if (!(v <= 0x1.fffffffffffffp1023)) {
                    want_fin = 0;
                    continue;
                }
                want_mx = std::max(want_mx, v);
                if (v != 0) want_low = std::min(want_low, lowest(v));
            }
            if (want_fin == 0) {
                if (fin[i] != 0) fail_msg("isa %s, trial %d: row %d holds Inf or NaN, not flagged", isa_name(g_isa), trial, i);
                continue;
            }
            if (fin[i] != 1 || mx[i] != want_mx || low[i] != want_low)
                fail_msg("isa %s, trial %d, row %d: max %a low %a finite %g, want %a %a 1", isa_name(g_isa), trial, i, mx[i],
                         low[i], fin[i], want_mx, want_low);
            scale[i] = want_mx == 0 ? 1 : std::ldexp(1.0, -std::max(-1022, std::ilogb(want_mx) + 1));
        }
        if (trial % 3 != 2) continue;  // the sums are taken of finite rows only
        loops.scaled_sums(x.data(), ld, contiguous, o0, count, depth, scale.data(), s1.data(), s2.data());
        for (int i = 0; i < count; ++i) {
            double w1 = 0.5, w2 = 0.25;
            for (int l = 0; l < depth; ++l) {
                const double v = std::fabs(at(o0 + i, l)) * scale[i];
                w1 += v;
                w2 += v * v;
            }
            if (s1[i] != w1 || s2[i] != w2)
                fail_msg("isa %s, trial %d, row %d: sums %a %a, want %a %a", isa_name(g_isa), trial, i, s1[i], s2[i], w1, w2);
        }
    }
}

// The one-read loop of rows contiguous in memory (extremes_and_sums) against extremes and
// scaled_sums: the same three extremes, the least nonzero |x| (+inf for a zero row), and sums
// that, times 2^-e (twice for the squares), are scaled_sums' to the bit wherever
// int8_unscaled_sums_exact lets the row through. Rows whose squares fall below 2^-1022
// unscaled (every |x| below 2^-511) it must not: there the rescaled sums of squares differ.
void test_one_read_sums_rescale_exactly(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    amxblas::test::Rng r(37);
    const int o0 = 2, count = 40, depth = 301;
    const std::size_t ld = o0 + count + 5;
    int exact_rows = 0, differing = 0;
    for (int trial = 0; trial < 12; ++trial) {
        std::vector<double> x(std::size_t(depth) * ld, 5.0);
        std::vector<int> kind(count);
        for (int i = 0; i < count; ++i) {
            kind[i] = (i + trial) % 5;
            const int e = kind[i] == 1 ? 480 : kind[i] == 2 ? -500 : kind[i] == 3 ? -520 : int(r.uniform() * 40);
            for (int l = 0; l < depth; ++l) {
                const double sig = 1 + std::ldexp(double(r.next() >> 12), -52);
                double v = std::ldexp(sig, e - 1 - int(std::fabs(r.uniform()) * (kind[i] == 2 ? 10 : 30)));
                if (l % 7 == 3 || (kind[i] == 4 && trial % 2)) v = 0;
                x[std::size_t(l) * ld + o0 + i] = (r.uniform() < 0 ? -1 : 1) * v;
            }
            if (!(kind[i] == 4 && trial % 2)) x[std::size_t((i * 13) % depth) * ld + o0 + i] = 0.75 * std::ldexp(1.0, e);
        }
        std::vector<double> mx(count), low(count), fin(count), least(count), u1(count), u2(count);
        std::vector<double> mx2(count), low2(count), fin2(count), scale(count), s1(count, 0.0), s2(count, 0.0);
        std::vector<int> e(count);
        loops.extremes_and_sums(x.data(), ld, o0, count, depth, mx.data(), low.data(), fin.data(), least.data(),
                                u1.data(), u2.data());
        loops.extremes(x.data(), ld, true, o0, count, depth, mx2.data(), low2.data(), fin2.data());
        for (int i = 0; i < count; ++i) {
            double want_least = INFINITY;
            for (int l = 0; l < depth; ++l) {
                const double v = std::fabs(x[std::size_t(l) * ld + o0 + i]);
                if (v != 0) want_least = std::min(want_least, v);
            }
            if (mx[i] != mx2[i] || low[i] != low2[i] || fin[i] != fin2[i] || least[i] != want_least)
                fail_msg("isa %s, trial %d, row %d: max %a low %a finite %g least %a, want %a %a %g %a", isa_name(g_isa),
                         trial, i, mx[i], low[i], fin[i], least[i], mx2[i], low2[i], fin2[i], want_least);
            int ex = 0;
            const double f = mx[i] != 0 ? std::frexp(mx[i], &ex) : 0.5;
            e[i] = mx[i] == 0 ? 0 : f == 0.5 ? ex - 1 : ex;  // ceil(log2 max)
            scale[i] = std::ldexp(1.0, -e[i]);
        }
        loops.scaled_sums(x.data(), ld, true, o0, count, depth, scale.data(), s1.data(), s2.data());
        for (int i = 0; i < count; ++i) {
            const double r1 = u1[i] * scale[i], r2 = u2[i] * scale[i] * scale[i];
            if (kind[i] == 3 && int8_unscaled_sums_exact(mx[i], least[i], e[i]))
                fail_msg("isa %s, trial %d, row %d: squares below 2^-1022 let through", isa_name(g_isa), trial, i);
            if (kind[i] == 3) differing += r2 != s2[i];
            if (!int8_unscaled_sums_exact(mx[i], least[i], e[i])) continue;
            ++exact_rows;
            if (r1 != s1[i] || r2 != s2[i])
                fail_msg("isa %s, trial %d, row %d (e %d): rescaled sums %a %a, scaled %a %a", isa_name(g_isa), trial, i,
                         e[i], r1, r2, s1[i], s2[i]);
        }
    }
    assert_true(exact_rows >= 12 * 30);  // kinds 0, 1, 2 and 4 (zero rows included)
    assert_true(differing > 0);
}

// Where a whole-block gather puts value (o, l) of a block: A's rows in runs of 64 K values, B's
// columns in K quads of 16 columns (int8_pack.cc's packed order).
int packed_position(bool is_a, int o, int l) {
    using detail::kInt8BlockDepth;
    using detail::kInt8QuadColumns;
    return is_a ? o * kInt8BlockDepth + l
                : (o / kInt8QuadColumns) * (kInt8BlockDepth * kInt8QuadColumns) + (l / 4) * (4 * kInt8QuadColumns) +
                      (o % kInt8QuadColumns) * 4 + l % 4;
}

// The whole-block loops of this build: null where it has none, which only the avx512 build must
// have (then the test is reported skipped).
bool whole_block_loop(bool present, const char* name) {
    if (present) return true;
    if (g_isa == Isa::avx512) fail_msg("the avx512 build has no %s", name);
    return false;
}

// The whole-block gather (where this build has one) against the packed order's definition,
// bit for bit: A's rows (x(o, l) at base[o + l ld]) and B's columns (at base[o ld + l]), each
// value times its row's (column's) scale, signs and zeros included.
void test_gather_full_matches_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    if (!whole_block_loop(loops.gather_full != nullptr, "gather_full")) skip();
    using detail::kInt8BlockDepth;
    using detail::kInt8BlockOuter;
    amxblas::test::Rng r(37);
    for (int trial = 0; trial < 8; ++trial) {
        const bool is_a = trial % 2 == 0;
        const std::size_t ld = (is_a ? kInt8BlockOuter : kInt8BlockDepth) + 3 + trial;
        std::vector<double> x(ld * (is_a ? kInt8BlockDepth : kInt8BlockOuter));
        for (double& v : x) v = std::ldexp(r.uniform(), int(r.uniform() * 40));
        x[5] = 0.0, x[6] = -0.0;
        double scale[kInt8BlockOuter];
        for (double& s : scale) s = std::ldexp(1.0 + std::fabs(r.uniform()), int(r.uniform() * 30));
        std::vector<double> v(kInt8BlockValues, 0.0);
        loops.gather_full(is_a, x.data(), ld, scale, v.data());
        for (int o = 0; o < kInt8BlockOuter; ++o)
            for (int l = 0; l < kInt8BlockDepth; ++l) {
                const double want = (is_a ? x[o + l * ld] : x[o * ld + l]) * scale[o];
                const int at = packed_position(is_a, o, l);
                if (std::memcmp(&v[at], &want, sizeof want) != 0)
                    fail_msg("isa %s, %s, (%d, %d): %a, want %a", isa_name(g_isa), is_a ? "A" : "B", o, l, v[at], want);
            }
    }
}

// digits_full against its definition: min(127, floor(|x scale|)) at gather_full's packed
// positions, with x scale over [0, 128] (values of 2^e times 2^(7 - e), as the magnitudes'
// pack scales them), integers and the cap among them; bytes outside the block untouched.
void test_digits_full_matches_definition(void**) {
    const detail::Int8ResidueLoops& loops = *isa_kernels(g_isa).int8_residues;
    if (!whole_block_loop(loops.digits_full != nullptr, "digits_full")) skip();
    using detail::kInt8BlockDepth;
    using detail::kInt8BlockOuter;
    amxblas::test::Rng r(39);
    for (int trial = 0; trial < 8; ++trial) {
        const bool is_a = trial % 2 == 0;
        const std::size_t ld = (is_a ? kInt8BlockOuter : kInt8BlockDepth) + 5 + trial;
        std::vector<double> x(ld * (is_a ? kInt8BlockDepth : kInt8BlockOuter));
        double scale[kInt8BlockOuter];
        for (double& sc : scale) sc = std::ldexp(1.0, int(r.uniform() * 30));
        for (std::size_t q = 0; q < x.size(); ++q) {
            const int o = is_a ? int(q % ld) : int(q / ld);
            const int kind = r.below(6);
            const double y = kind == 0 ? 128.0 : kind == 1 ? std::floor(128 * std::fabs(r.uniform())) : 128 * r.uniform();
            x[q] = o < kInt8BlockOuter ? y / scale[o] * (r.below(2) ? 1 : -1) : 0.0;
        }
        const std::size_t at = 64;
        std::vector<std::int8_t> out(at + kInt8BlockValues + 64, 99);
        loops.digits_full(is_a, x.data(), ld, scale, out.data(), at);
        for (std::size_t q = 0; q < at; ++q) assert_int_equal(out[q], 99);
        for (std::size_t q = at + kInt8BlockValues; q < out.size(); ++q) assert_int_equal(out[q], 99);
        for (int o = 0; o < kInt8BlockOuter; ++o)
            for (int l = 0; l < kInt8BlockDepth; ++l) {
                const double v = (is_a ? x[o + l * ld] : x[o * ld + l]) * scale[o];
                const int want = int(std::min(127.0, std::floor(std::fabs(v))));
                const int pos = packed_position(is_a, o, l);
                if (out[at + pos] != want)
                    fail_msg("isa %s, %s, (%d, %d): %d, want %d (%a)", isa_name(g_isa), is_a ? "A" : "B", o, l,
                             out[at + pos], want, v);
            }
    }
}

}  // namespace

int main() {
    g_isa = amxblas::test::isa_under_test("kernels_int8_residues_test");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_residues_match_definition),
        cmocka_unit_test(test_residues_of_every_basis),
        cmocka_unit_test(test_digits_floor_and_cap),
        cmocka_unit_test(test_fold_matches_definition),
        cmocka_unit_test(test_crt_row_matches_definition),
        cmocka_unit_test(test_row_counts_match_definition),
        cmocka_unit_test(test_facts_match_definition),
        cmocka_unit_test(test_one_read_sums_rescale_exactly),
        cmocka_unit_test(test_gather_full_matches_definition),
        cmocka_unit_test(test_digits_full_matches_definition),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

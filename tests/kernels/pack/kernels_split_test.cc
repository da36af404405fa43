// BF16 rounding and the FP32/FP64 splits (kernels/common/bf16.h, kernels/isa/split.h).
#include "kernels/common/bf16.h"
#include "kernels/runtime/cpu_features.h"
#include "kernels/pack/pack.h"
#include "kernels/isa/split.h"
#include "tests/kernels/kernels_test_util.h"
#include "kernels/bf16/fp64_facts.h"
#include "tests/kernels/pack/pack_test_entry.h"

using namespace amxblas::kernels;

namespace {

// The split tables this CPU runs: the portable one, and the AVX2 and AVX-512 ones where they can run.
std::vector<const SplitKernels*> split_tables_here() {
    std::vector<const SplitKernels*> tables = {&split_kernels_portable()};
    if (cpu_has_avx2()) tables.push_back(&split_kernels_avx2());
    if (cpu_has_avx512_split()) tables.push_back(&split_kernels_avx512());
    return tables;
}

// A packed operand of `slices` slices over buf, filled with 0xFFFF (a NaN pattern, so an entry
// the packer forgets shows), for op(X) with `outer` rows (A) or columns (B) and depth k.
PackedOperand packed_over(std::vector<bf16_t>* buf, int slices, int outer, int k) {
    const std::size_t elems = packed_slice_elems(outer, k);
    buf->assign(elems * slices, 0xFFFF);
    PackedOperand out;
    out.slices = slices;
    out.panels = round_up_tile(outer) / kTile;
    out.ksteps = round_up_tile(k) / kTile;
    for (int s = 0; s < slices; ++s) out.slice[s] = buf->data() + s * elems;
    return out;
}

bf16_t rne_bits(std::uint32_t u) { return bf16_rne(bits_float(u)); }

void test_bf16_rne_ties_to_even(void**) {
    assert_int_equal(rne_bits(0x3F800000u), 0x3F80);  // 1.0
    assert_int_equal(rne_bits(0x3F808000u), 0x3F80);  // tie, kept part even: down
    assert_int_equal(rne_bits(0x3F818000u), 0x3F82);  // tie, kept part odd: up
    assert_int_equal(rne_bits(0x3F807FFFu), 0x3F80);  // below the tie
    assert_int_equal(rne_bits(0x3F808001u), 0x3F81);  // above the tie
    assert_int_equal(rne_bits(0xBF818000u), 0xBF82);  // sign does not matter
    assert_int_equal(rne_bits(0x3FFF8000u), 0x4000);  // carry into the exponent
    assert_int_equal(rne_bits(0x00000000u), 0x0000);
    assert_int_equal(rne_bits(0x80000000u), 0x8000);
}

void test_bf16_rne_overflow_and_nan(void**) {
    assert_int_equal(rne_bits(0x7F7FFFFFu), 0x7F80);  // FLT_MAX rounds to +Inf
    assert_int_equal(rne_bits(0xFF7FFFFFu), 0xFF80);
    assert_int_equal(rne_bits(0x7F7F7FFFu), 0x7F7F);  // largest BF16 stays finite
    assert_int_equal(rne_bits(0x7F800000u), 0x7F80);  // Inf stays Inf
    const std::uint32_t nans[] = {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7F80FFFFu};
    for (std::uint32_t u : nans) {
        const bf16_t h = rne_bits(u);
        assert_true((h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0);  // still a NaN, not Inf
        assert_int_equal(h & 0x8000, (u >> 16) & 0x8000);
    }
}

// |x - (s0 + s1 + s2)| <= 2^-24 |x|: each RNE to 8 bits leaves at most 2^-8 of the residual
// (relative), and the FP32 subtractions are exact (Sterbenz), so after three slices <= 2^-24.
void test_fp32_split_reconstructs(void**) {
    const SplitKernels& sk = split_kernels_portable();
    kt::Rng r(7);
    std::vector<float> x;
    for (int i = 0; i < 4000; ++i) x.push_back(float(std::ldexp(r.uniform(), int(r.uniform() * 100))));
    for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 0x1p-100f, 0x1p100f, -0x1p64f, 3.0f, -0x1.fffffep0f, 0x1.000002p0f})
        x.push_back(v);
    std::vector<bf16_t> s0(x.size()), s1(x.size()), s2(x.size());
    sk.fp32(x.data(), x.size(), s0.data(), s1.data(), s2.data());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double sum = double(bf16_to_float(s0[i])) + bf16_to_float(s1[i]) + bf16_to_float(s2[i]);
        const double err = std::fabs(double(x[i]) - sum);
        if (!(err <= 0x1p-24 * std::fabs(double(x[i])))) fail_msg("x=%a sum=%a", double(x[i]), sum);
    }
    // A power of two is one slice; a negative value has a negative leading slice.
    const std::size_t base = x.size() - 10;
    assert_int_equal(s0[base + 2], 0x3F80);
    assert_int_equal(s1[base + 2], 0);
    assert_int_equal(s2[base + 2], 0);
    assert_int_equal(s0[base + 3] & 0x8000, 0x8000);
}

// The FP64 residual bound. With v = ceil(log2 max|A^(r)|) and sigma = 0.75 * 2^(v+45),
// fl(x + sigma) lies in [1.5 * 2^(v+44) - 2^v, 1.5 * 2^(v+44) + 2^v], inside one binade whose
// FP64 spacing is 2^(v-8), so Z is x rounded to nearest on the 2^(v-8) grid for either sign:
// |A^(r+1)| <= 2^(v-9) entrywise, hence v(r+1) <= v(r) - 9, and after eight slices
//     |A^(8)|_ij <= 2^(v(7) - 9) <= 2^(v(0) - 72).
// Z has at most 8 significant bits (a multiple of 2^(v-8) no larger than 2^v), so the stored
// slice Z * 2^-v, a multiple of 2^-8 in [-1, 1], is an exact normal BF16 value (or zero) and
// the residual update is exact.
void check_fp64_split(const std::vector<double>& x, const SplitKernels& sk) {
    const OperandView<double> v{'N', int(x.size()), 1, x.data(), int(x.size())};
    Fp64Scales sc;
    assert_null(fp64_scales(v, sk, 1, kFp64Slices, &sc));
    std::vector<std::vector<bf16_t>> s(kFp64Slices, std::vector<bf16_t>(x.size()));
    bf16_t* sp[kFp64Slices];
    for (int t = 0; t < kFp64Slices; ++t) sp[t] = s[t].data();
    assert_int_equal(int(sk.fp64(x.data(), x.size(), sc, sp, nullptr)), int(SliceStatus::ok));
    double mx = 0;
    for (double e : x) mx = std::fmax(mx, std::fabs(e));
    for (int t = 0; t < sc.active; ++t) {
        assert_true(sc.sigma[t] == std::ldexp(0.75, ozaki_v(sc.sigma[t]) + kOzakiRho));
        if (t > 0 && !(ozaki_v(sc.sigma[t]) <= ozaki_v(sc.sigma[t - 1]) - 9)) fail_msg("v(%d) not 9 below v(%d)", t, t - 1);
    }
    const double bound = mx == 0 ? 0 : std::ldexp(1.0, ozaki_v(sc.sigma[0]) - 9 * kFp64Slices);
    for (std::size_t i = 0; i < x.size(); ++i) {
        double res = x[i];
        for (int t = 0; t < kFp64Slices; ++t) {
            const bf16_t h = s[t][i];
            assert_true(h == 0 || h == 0x8000 || (((h >> 7) & 0xFF) != 0 && ((h >> 7) & 0xFF) != 0xFF));
            if (t >= sc.active) assert_true((h & 0x7FFF) == 0);
            const double zn = double(bf16_to_float(h));
            if (!(std::fabs(zn) <= 1.0) || std::fmod(zn, 0x1p-8) != 0) fail_msg("slice %d not normalised x=%a", t, x[i]);
            if (t < sc.active) res -= std::ldexp(zn, ozaki_v(sc.sigma[t]));
            if (t < sc.active && t + 1 < kFp64Slices) {
                // |A^(t+1)| <= 2^(v(t) - 9)
                if (!(std::fabs(res) <= std::ldexp(1.0, ozaki_v(sc.sigma[t]) - 9))) fail_msg("step %d x=%a", t, x[i]);
            }
        }
        if (!(std::fabs(res) <= bound)) fail_msg("x=%a residual=%a bound=%a", x[i], res, bound);
    }
}

// The split is an odd function: Z(-x) = -Z(x) slice by slice (sigma is an even multiple of the
// 2^(v-8) spacing, so ties to even round x and -x to opposite grid points).
void test_fp64_split_odd(void**) {
    const SplitKernels& sk = split_kernels_portable();
    kt::Rng r(12);
    std::vector<double> x(2000);
    for (std::size_t i = 0; i < x.size(); i += 2) {
        x[i] = r.uniform();
        x[i + 1] = -x[i];
    }
    x[0] = 1.0 - 0x1p-9;  // a tie on the 2^-8 grid
    x[1] = -x[0];
    Fp64Scales sc;
    assert_null(fp64_scales({'N', int(x.size()), 1, x.data(), int(x.size())}, sk, 1, kFp64Slices, &sc));
    std::vector<std::vector<bf16_t>> s(kFp64Slices, std::vector<bf16_t>(x.size()));
    bf16_t* sp[kFp64Slices];
    for (int t = 0; t < kFp64Slices; ++t) sp[t] = s[t].data();
    assert_int_equal(int(sk.fp64(x.data(), x.size(), sc, sp, nullptr)), 0);
    for (std::size_t i = 0; i < x.size(); i += 2)
        for (int t = 0; t < kFp64Slices; ++t)
            if (s[t][i] != 0 && s[t][i + 1] != (s[t][i] ^ 0x8000)) fail_msg("slice %d of +-%a", t, x[i]);
}

void test_fp64_split_bounds(void**) {
    const SplitKernels& sk = split_kernels_portable();
    kt::Rng r(11);
    std::vector<double> x(3001);
    for (auto& e : x) e = r.uniform();
    check_fp64_split(x, sk);
    for (auto& e : x) e = std::ldexp(r.uniform(), int(r.uniform() * 20));  // wider range
    check_fp64_split(x, sk);
    check_fp64_split({0.0, 0.0, -0.0}, sk);
    check_fp64_split({1.0, -2.0, 0x1p-30, -0.5}, sk);
    check_fp64_split({0x1p100, 1.0, -3.0, 0x1.23456789abcdep-20}, sk);  // one huge entry
    check_fp64_split({1.0, 0x1p-120, -0x1.8p-121}, sk);                 // tiny entries
    check_fp64_split({0x1p-100 + 0x1p-140, 1e-300, 4.9e-324}, sk);      // bits far below 2^-126
    check_fp64_split({-0x1.fffffffffffffp0, 0x1.0000000000001p0}, sk);  // full significands
}

void test_fp64_split_zero_and_powers(void**) {
    const SplitKernels& sk = split_kernels_portable();
    std::vector<double> z(40, 0.0);
    Fp64Scales sc;
    assert_null(fp64_scales({'N', 40, 1, z.data(), 40}, sk, 1, kFp64Slices, &sc));
    assert_int_equal(sc.active, 0);
    std::vector<double> p = {4.0, -4.0, 0.5, 0x1p-100};
    assert_null(fp64_scales({'N', 4, 1, p.data(), 4}, sk, 1, kFp64Slices, &sc));
    std::vector<std::vector<bf16_t>> s(kFp64Slices, std::vector<bf16_t>(4));
    bf16_t* sp[kFp64Slices];
    for (int t = 0; t < kFp64Slices; ++t) sp[t] = s[t].data();
    assert_int_equal(int(sk.fp64(p.data(), 4, sc, sp, nullptr)), 0);
    assert_int_equal(s[0][0], bf16_rne(1.0f));  // 4 / 2^v(0), v(0) = 2
    assert_int_equal(s[0][1], bf16_rne(-1.0f));
    assert_int_equal(s[0][2], bf16_rne(0.125f));
    assert_int_equal(s[0][3], 0);                  // far below 2^(v - 8): left to later slices
    assert_int_equal(s[1][3], bf16_rne(1.0f));    // 2^-100 / 2^v(1), v(1) = -100
    for (int t = 1; t < kFp64Slices; ++t) assert_int_equal(s[t][0], 0);
    assert_int_equal(sc.active, 2);  // nothing left after slice 1
}

// Zeros of either sign split into +0 in every slice (the slice buffers are reused: each must be
// written) and raise no residual maximum, wherever they sit among other values.
void test_fp64_split_zeros_among_values(void**) {
    const SplitKernels& sk = split_kernels_portable();
    const std::vector<double> x = {0.0, 1.0 - 0x1p-30, -0.0, -0x1.23456789abcdep-3, 0.0, 0x1p-60};
    std::vector<double> nonzero;
    for (double e : x)
        if (e != 0) nonzero.push_back(e);
    Fp64Scales sc;
    assert_null(fp64_scales({'N', int(x.size()), 1, x.data(), int(x.size())}, sk, 1, kFp64Slices, &sc));
    std::vector<std::vector<bf16_t>> s(kFp64Slices, std::vector<bf16_t>(x.size(), 0x7777));
    bf16_t* sp[kFp64Slices];
    for (int t = 0; t < kFp64Slices; ++t) sp[t] = s[t].data();
    double with[kFp64Slices + 1] = {}, without[kFp64Slices + 1] = {};
    assert_int_equal(int(sk.fp64(x.data(), x.size(), sc, sp, with)), 0);
    std::vector<std::vector<bf16_t>> s2(kFp64Slices, std::vector<bf16_t>(nonzero.size()));
    bf16_t* sp2[kFp64Slices];
    for (int t = 0; t < kFp64Slices; ++t) sp2[t] = s2[t].data();
    assert_int_equal(int(sk.fp64(nonzero.data(), nonzero.size(), sc, sp2, without)), 0);
    for (int t = 0; t <= kFp64Slices; ++t) assert_true(with[t] == without[t]);
    for (int t = 0; t < kFp64Slices; ++t)
        for (std::size_t i = 0, q = 0; i < x.size(); ++i) {
            if (x[i] == 0) assert_int_equal(s[t][i], 0);
            else assert_int_equal(s[t][i], s2[t][q++]);
        }
}

// The FP64 split as Section 1 of docs/fp64-certificate.md defines it, one value at a time: what
// every split this CPU runs (the portable and AVX2 ones run values side by side in runs,
// kernels/isa/fp64_split_runs.inc) must give bit for bit, with its status and residual maxima.
SliceStatus split_value_by_value(const std::vector<double>& x, const Fp64Scales& sc, std::vector<bf16_t>* s,
                                 double* resid_max) {
    int worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double v = x[i];
        for (int t = 0; t < sc.slices; ++t) {
            resid_max[t] = std::max(resid_max[t], std::fabs(v));
            if (t >= sc.active) {
                s[t][i] = 0;
                continue;
            }
            const double c = (v + sc.sigma[t]) - sc.sigma[t];
            const double z = c * sc.norm[t];
            if (z != 0 && std::fabs(z) < 0x1p-126) worst = std::max(worst, 1);
            if (std::fabs(z) > 0x1.FEp127) worst = 2;
            s[t][i] = bf16_rne(static_cast<float>(z));
            v -= c;
        }
        resid_max[sc.slices] = std::max(resid_max[sc.slices], std::fabs(v));
    }
    return SliceStatus(worst);
}

void check_split_runs_value_by_value(const SplitKernels& sk) {
    kt::Rng r(11);
    const auto compare = [&](const std::vector<double>& x, const Fp64Scales& sc) {
        std::vector<bf16_t> want[kFp64Slices], got[kFp64Slices];
        bf16_t* gp[kFp64Slices];
        for (int t = 0; t < kFp64Slices; ++t) {
            want[t].assign(x.size(), 0x7777);
            got[t].assign(x.size(), 0x7777);  // a slice the split forgets to write shows
            gp[t] = got[t].data();
        }
        double want_max[kFp64Slices + 1] = {}, got_max[kFp64Slices + 1] = {};
        const SliceStatus expect = split_value_by_value(x, sc, want, want_max);
        assert_int_equal(int(sk.fp64(x.data(), x.size(), sc, gp, got_max)), int(expect));
        for (int t = 0; t <= sc.slices; ++t) assert_true(got_max[t] == want_max[t]);
        for (int t = 0; t < sc.slices; ++t) assert_memory_equal(got[t].data(), want[t].data(), x.size() * sizeof(bf16_t));
        assert_int_equal(int(sk.fp64(x.data(), x.size(), sc, gp, nullptr)), int(expect));  // untracked: same slices
        for (int t = 0; t < sc.slices; ++t) assert_memory_equal(got[t].data(), want[t].data(), x.size() * sizeof(bf16_t));
        return expect;
    };
    // Lengths about the run of 64 values, with runs of zeros (aligned or not) among the values.
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(63), std::size_t(64), std::size_t(65),
                          std::size_t(130), std::size_t(257)})
        for (int range : {1, 40, 300}) {
            std::vector<double> x(n);
            for (auto& e : x) e = std::ldexp(r.uniform() - 0.5, int(r.uniform() * range) - range / 2);
            for (std::size_t i = 64; i < std::min(n, std::size_t(128)); ++i) x[i] = (i & 1) ? 0.0 : -0.0;
            for (std::size_t i = 3; i < std::min(n, std::size_t(9)); ++i) x[i] = 0.0;
            Fp64Scales sc;
            assert_null(fp64_scales({'N', int(n), 1, x.data(), int(n)}, sk, 1, kFp64Slices, &sc));
            compare(x, sc);
            Fp64Scales fewer = sc;  // a route of 4 slices, of which 2 active
            fewer.slices = 4;
            fewer.active = std::min(sc.active, 2);
            compare(x, fewer);
        }
    // The safety net's statuses: scales that push a slice past BF16's range or below its normal
    // range (the norms are the split's input; fp64_scales never gives these).
    std::vector<double> x(100);
    for (auto& e : x) e = r.uniform() + 0.5;
    Fp64Scales sc;
    assert_null(fp64_scales({'N', 100, 1, x.data(), 100}, sk, 1, kFp64Slices, &sc));
    Fp64Scales big = sc, small = sc;
    big.norm[1] = 0x1p200;
    small.norm[2] = 0x1p-200;
    assert_int_equal(int(compare(x, big)), int(SliceStatus::overflow));
    assert_int_equal(int(compare(x, small)), int(SliceStatus::subnormal));
}

void test_fp64_split_runs_value_by_value(void**) {
    for (const SplitKernels* sk : split_tables_here()) check_split_runs_value_by_value(*sk);
}

// Normalised slices stay normal BF16 numbers at both ends of the range: bits far below 2^-126
// (2^-100 + 2^-140: its second slice is 2^-140, stored as 1.0), the largest BF16 and the value
// past it that rounds up to 2^128 on its grid (stored as 1.0 with v = 128). Inf/NaN is reported.
void test_fp64_split_extremes_normalised(void**) {
    const SplitKernels& sk = split_kernels_portable();
    Fp64Scales sc;
    std::vector<std::vector<bf16_t>> s(kFp64Slices, std::vector<bf16_t>(2));
    bf16_t* sp[kFp64Slices];
    for (int t = 0; t < kFp64Slices; ++t) sp[t] = s[t].data();
    std::vector<double> x = {0x1p-100 + 0x1p-140, 0.0};
    assert_null(fp64_scales({'N', 2, 1, x.data(), 2}, sk, 1, kFp64Slices, &sc));
    assert_int_equal(int(sk.fp64(x.data(), 2, sc, sp, nullptr)), int(SliceStatus::ok));
    assert_int_equal(s[0][0], bf16_rne(0.5f));
    assert_int_equal(s[1][0], bf16_rne(1.0f));
    assert_int_equal(ozaki_v(sc.sigma[1]), -140);
    std::vector<double> top = {0x1.FEp127, 1.0};
    assert_null(fp64_scales({'N', 2, 1, top.data(), 2}, sk, 1, kFp64Slices, &sc));
    assert_int_equal(int(sk.fp64(top.data(), 2, sc, sp, nullptr)), int(SliceStatus::ok));
    assert_int_equal(s[0][0], 0x3F7F);  // 255/256
    std::vector<double> past = {0x1.FF8p127, 1.0};
    assert_null(fp64_scales({'N', 2, 1, past.data(), 2}, sk, 1, kFp64Slices, &sc));
    assert_int_equal(int(sk.fp64(past.data(), 2, sc, sp, nullptr)), int(SliceStatus::ok));
    assert_int_equal(s[0][0], bf16_rne(1.0f));
    std::vector<double> bad = {1.0, NAN};
    assert_string_equal(fp64_scales({'N', 2, 1, bad.data(), 2}, sk, 1, kFp64Slices, &sc), "domain:nonfinite");
}

// The AVX-512 split must be the portable split, bit for bit (tails included).
void test_avx512_split_bitwise(void**) {
    if (!cpu_has_avx512_split()) skip();
    const SplitKernels& p = split_kernels_portable();
    const SplitKernels& v = split_kernels_avx512();
    kt::Rng r(3);
    const std::size_t n = 4133;
    std::vector<float> xf(n);
    for (auto& e : xf) e = float(std::ldexp(r.uniform(), int(r.uniform() * 140)));
    const std::uint32_t special[] = {0x7FC00000u, 0x7F800001u, 0xFF800000u, 0x7F7FFFFFu, 0x00000001u,
                                     0x807FFFFFu, 0x3F808000u, 0x3F818000u, 0x80000000u};
    for (std::size_t i = 0; i < sizeof special / sizeof special[0]; ++i) xf[i * 37] = bits_float(special[i]);
    std::vector<bf16_t> a[3], b[3];
    for (int s = 0; s < 3; ++s) a[s].resize(n), b[s].resize(n);
    p.fp32(xf.data(), n, a[0].data(), a[1].data(), a[2].data());
    v.fp32(xf.data(), n, b[0].data(), b[1].data(), b[2].data());
    for (int s = 0; s < 3; ++s) assert_memory_equal(a[s].data(), b[s].data(), n * sizeof(bf16_t));

    for (int range : {1, 30, 200}) {
        std::vector<double> xd(n);
        for (auto& e : xd) e = std::ldexp(r.uniform(), int(r.uniform() * range));
        Fp64Scales sp, sv;
        assert_null(fp64_scales({'N', int(n), 1, xd.data(), int(n)}, p, 1, kFp64Slices, &sp));
        assert_null(fp64_scales({'N', 97, int(n / 97), xd.data(), 97}, v, 2, kFp64Slices, &sv));
        assert_int_equal(sp.active, sv.active);
        assert_memory_equal(sp.sigma, sv.sigma, sizeof sp.sigma);
        std::vector<bf16_t> c[kFp64Slices], d[kFp64Slices];
        bf16_t *pc[kFp64Slices], *pd[kFp64Slices];
        for (int s = 0; s < kFp64Slices; ++s) c[s].resize(n), d[s].resize(n), pc[s] = c[s].data(), pd[s] = d[s].data();
        assert_int_equal(int(p.fp64(xd.data(), n, sp, pc, nullptr)), int(v.fp64(xd.data(), n, sp, pd, nullptr)));
        for (int s = 0; s < kFp64Slices; ++s) assert_memory_equal(c[s].data(), d[s].data(), n * sizeof(bf16_t));
        double rp[kFp64Slices + 1] = {}, rv[kFp64Slices + 1] = {};
        p.fp64(xd.data(), n, sp, pc, rp);
        v.fp64(xd.data(), n, sp, pd, rv);
        assert_memory_equal(rp, rv, sizeof rp);
        for (int rr = 0; rr < 6; ++rr) {
            const AbsMax mp = p.fp64_absmax(xd.data(), n, sp, rr), mv = v.fp64_absmax(xd.data(), n, sp, rr);
            assert_true(mp.value == mv.value);
        }
    }

    // The exponent scans' maxima of |x| patterns, runs of every length mod 32 (tails), with
    // negative zero, subnormals, Inf and NaN among them.
    std::vector<double> xd(n);
    for (auto& e : xd) e = std::ldexp(r.uniform() - 0.5, int(r.uniform() * 2000) - 1070);
    xd[7] = -0.0;
    xd[100] = -INFINITY;
    xd[300] = NAN;
    xd[301] = 4.9e-324;
    for (std::size_t len : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(9), std::size_t(31),
                            std::size_t(33), std::size_t(99), std::size_t(298), n})
        for (std::size_t at : {std::size_t(0), std::size_t(1), std::size_t(100), std::size_t(250)}) {
            if (at + len > n) continue;
            assert_true(p.absbits_max(xd.data() + at, len) == v.absbits_max(xd.data() + at, len));
        }
    // Across runs: up to 100 lanes, runs of 0 to 40 values 61 apart, into maxima that start
    // at a small pattern.
    for (int lanes = 0; lanes <= 100; ++lanes)
        for (int len : {0, 1, 7, 40}) {
            std::vector<std::uint64_t> mp(101, 5), mv(101, 5);
            p.absbits_max_lanes(xd.data() + lanes, 61, len, lanes, mp.data());
            v.absbits_max_lanes(xd.data() + lanes, 61, len, lanes, mv.data());
            assert_memory_equal(mp.data(), mv.data(), mp.size() * sizeof(std::uint64_t));
        }
}

// The packed buffers, not just the split: the AVX-512 gathers (in-register transposes) must
// put every value where the portable gather does, for all four source layouts, with full
// and edge blocks, leading dimensions above the minimum, and 1 or 2 threads.
template <typename T>
void check_pack_bitwise(char trans, bool is_a, int rows, int cols, int threads) {
    const int stored_rows = trans == 'N' ? rows : cols, stored_cols = trans == 'N' ? cols : rows;
    const int ld = stored_rows + 5;
    kt::Rng r(rows * 131 + cols);
    std::vector<T> x(std::size_t(ld) * stored_cols);
    for (auto& e : x) e = T(std::ldexp(r.uniform(), int(r.uniform() * 40) - 20));
    const OperandView<T> v{trans, rows, cols, x.data(), ld};
    const int outer = is_a ? rows : cols, k = is_a ? cols : rows;
    const int slices = sizeof(T) == 4 ? kFp32Slices : kFp64Slices;
    std::vector<bf16_t> buf[2];
    const SplitKernels* tables[2] = {&split_kernels_portable(), &split_kernels_avx512()};
    for (int t = 0; t < 2; ++t) {
        const PackedOperand out = packed_over(&buf[t], slices, outer, k);
        if constexpr (sizeof(T) == 4) {
            (is_a ? pack_a_fp32 : pack_b_fp32)(v, out, *tables[t], threads);
        } else {
            // Scales of the unscaled operand are valid for the scaled one too (|x| only shrinks).
            Fp64Scales sc;
            assert_null(fp64_scales(v, *tables[t], threads, kFp64Slices, &sc));
            std::vector<int> exps(outer);
            bool nonzero;
            assert_null(fp64_outer_exponents(v, is_a, threads, exps.data(), &nonzero));
            assert_null((is_a ? pack_a_fp64 : pack_b_fp64)(v, exps.data(), sc, out, *tables[t], threads));
        }
    }
    for (std::size_t i = 0; i < buf[0].size(); ++i)
        if (buf[0][i] != buf[1][i])
            fail_msg("%s %c %dx%d threads %d: value %zu: portable %04x, avx512 %04x", is_a ? "A" : "B", trans, rows,
                     cols, threads, i, buf[0][i], buf[1][i]);
}

void test_avx512_pack_bitwise(void**) {
    if (!cpu_has_avx512_split()) skip();
    const int shapes[][2] = {{64, 96}, {70, 45}, {33, 128}, {96, 31}};
    for (char trans : {'N', 'T'})
        for (bool is_a : {true, false})
            for (const auto& sh : shapes)
                for (int threads : {1, 2}) {
                    check_pack_bitwise<float>(trans, is_a, sh[0], sh[1], threads);
                    check_pack_bitwise<double>(trans, is_a, sh[0], sh[1], threads);
                }
}

// split_pack_*_fp64 (exact row/column scaling, speculative scales, checked) against the
// reference: op(X) scaled explicitly with ldexp, fp64_scales + pack_*_fp64 on that copy. The
// same scales, buffers, residual maxima and reason, whichever way the speculation goes: dense
// data (confirmed), short values (the chain ends early), a residual that shrinks faster than
// 9 bits a slice (refuted, repacked), zeros, rows far apart in magnitude and subnormals.
void check_fused_fp64(const std::vector<double>& x, int rows, int cols, char trans, bool is_a,
                      const SplitKernels& sk, int slices) {
    const int stored_rows = trans == 'N' ? rows : cols;
    const OperandView<double> v{trans, rows, cols, x.data(), stored_rows};
    const int outer = is_a ? rows : cols, k = is_a ? cols : rows;
    std::vector<int> exps(outer);
    bool nonzero;
    assert_null(fp64_outer_exponents(v, is_a, 2, exps.data(), &nonzero));
    std::vector<double> xs(x.size());
    bool any = false;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const std::size_t at = trans == 'N' ? r + std::size_t(c) * stored_rows : c + std::size_t(r) * stored_rows;
            const int o = is_a ? r : c;
            double mx = 0;
            for (int l = 0; l < k; ++l) {
                const std::size_t bt = is_a ? (trans == 'N' ? r + std::size_t(l) * stored_rows : l + std::size_t(r) * stored_rows)
                                            : (trans == 'N' ? l + std::size_t(c) * stored_rows : c + std::size_t(l) * stored_rows);
                mx = std::fmax(mx, std::fabs(x[bt]));
            }
            int e = 0;
            if (mx > 0) {
                const double f = std::frexp(mx, &e);
                if (f == 0.5) --e;
            }
            assert_int_equal(exps[o], e);
            xs[at] = std::ldexp(x[at], -e);
            any = any || x[at] != 0;
        }
    assert_true(any == nonzero);
    const OperandView<double> vs{trans, rows, cols, xs.data(), stored_rows};
    std::vector<bf16_t> buf[2];
    Fp64Scales sc0;
    Fp64Split sp;
    const char* why[2] = {nullptr, nullptr};
    for (int t = 0; t < 2; ++t) {
        const PackedOperand out = packed_over(&buf[t], slices, outer, k);
        if (t == 0) {
            assert_null(fp64_scales(vs, sk, 2, slices, &sc0));
            why[t] = (is_a ? pack_a_fp64 : pack_b_fp64)(vs, nullptr, sc0, out, sk, 2);
        } else {
            why[t] = (is_a ? split_pack_a_fp64 : split_pack_b_fp64)(v, exps.data(), nonzero, &sp, out, sk, 2);
        }
    }
    assert_int_equal(sc0.active, sp.sc.active);
    assert_memory_equal(sc0.sigma, sp.sc.sigma, sizeof(double) * sc0.active);
    assert_true(why[0] == why[1] || (why[0] && why[1] && std::strcmp(why[0], why[1]) == 0));
    if (!why[0]) assert_memory_equal(buf[0].data(), buf[1].data(), buf[0].size() * sizeof(bf16_t));
    // The residual maxima: max |X^(r)| of the scaled copy, r = 0..slices.
    std::vector<double> res = xs;
    for (int r = 0; r <= slices; ++r) {
        double mx = 0;
        for (double e : res) mx = std::fmax(mx, std::fabs(e));
        if (!(mx == sp.resid[r])) fail_msg("resid[%d] = %a, expected %a", r, sp.resid[r], mx);
        if (r < sp.sc.active)
            for (double& e : res) e -= (e + sp.sc.sigma[r]) - sp.sc.sigma[r];
    }
}

// The first pass of a routed DGEMM (kernels/bf16/fp64_facts.h: the split chunk by chunk, each
// chunk 32 rows or columns by 64 of K, none kept) against split_pack of the whole operand: the
// same scales, residual maxima, norms, subnormal flag and reason.
void check_chunked_facts(const std::vector<double>& x, int rows, int cols, char trans, bool is_a,
                         const SplitKernels& sk, int slices, int threads) {
    const int stored_rows = trans == 'N' ? rows : cols;
    const OperandView<double> v{trans, rows, cols, x.data(), stored_rows};
    const int outer = is_a ? rows : cols, k = is_a ? cols : rows;
    std::vector<int> exps(outer, 77);
    bool nonzero = false;
    if (fp64_outer_exponents(v, is_a, threads, exps.data(), &nonzero)) return;  // Inf or NaN: no split
    std::vector<bf16_t> buf[2];
    std::vector<double> norms[2];
    Fp64Split sp[2];
    const char* why[2] = {};
    for (int w = 0; w < 2; ++w) {
        norms[w].assign(std::size_t(slices) * outer, -1.0);
        sp[w].norms = norms[w].data();
        if (w == 0) {
            const PackedOperand out = packed_over(&buf[w], slices, outer, k);
            why[w] = (is_a ? split_pack_a_fp64 : split_pack_b_fp64)(v, exps.data(), nonzero, &sp[w], out, sk, threads);
        } else {
            const PackedOperand chunk = packed_over(&buf[w], slices, 32, 64);
            why[w] = fp64_split_facts(is_a, v, exps.data(), nonzero, &sp[w], chunk, 32, 64, sk, threads);
        }
    }
    assert_true(why[0] == why[1] || (why[0] && why[1] && std::strcmp(why[0], why[1]) == 0));
    assert_true(norms[0] == norms[1]);
    assert_int_equal(sp[0].sc.active, sp[1].sc.active);
    assert_memory_equal(sp[0].sc.sigma, sp[1].sc.sigma, sizeof sp[0].sc.sigma);
    assert_memory_equal(sp[0].sc.norm, sp[1].sc.norm, sizeof sp[0].sc.norm);
    assert_memory_equal(sp[0].resid, sp[1].resid, sizeof sp[0].resid);
    assert_true(sp[0].subnormal_scaled == sp[1].subnormal_scaled);
}

void test_fp64_chunked_facts_match(void**) {
    const int rows = 70, cols = 100;
    kt::Rng r(23);
    std::vector<std::vector<double>> inputs;
    std::vector<double> x(std::size_t(rows) * cols);
    for (auto& e : x) e = r.uniform() - 0.5;
    inputs.push_back(x);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i / rows) % 3 == 0 || i % 7 == 0 ? 0.0 : std::ldexp(r.uniform(), int(i % 90) - 45);
    inputs.push_back(x);  // zero rows and columns either way, wide range
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(r.uniform(), int(i % 11) * 200 - 1100);
    inputs.push_back(x);  // subnormal rows: two-step scaling
    inputs.push_back(std::vector<double>(x.size(), 0.0));
    for (auto& e : x) e = r.uniform();
    x[1234] = NAN;
    inputs.push_back(x);
    x[1234] = -INFINITY;
    inputs.push_back(x);
    const std::vector<const SplitKernels*> tables = split_tables_here();
    for (const SplitKernels* sk : tables)
        for (const auto& in : inputs)
            for (char trans : {'N', 'T'})
                for (bool is_a : {true, false})
                    for (int threads : {1, 2})
                        check_chunked_facts(in, trans == 'N' ? rows : cols, trans == 'N' ? cols : rows, trans, is_a, *sk,
                                            is_a ? 3 : 8, threads);
}

// The same with rows whose largest entry lies in one K chunk only, a subnormal row (two-step
// scaling), an Inf or a NaN, and spread data, over several chunks of K and rows.
void test_fp64_chunked_facts_match_across_chunks(void**) {
    const int rows = 100, cols = 300;
    kt::Rng r(31);
    std::vector<std::vector<double>> inputs;
    std::vector<double> x(std::size_t(rows) * cols);
    for (auto& e : x) e = r.uniform() - 0.5;
    inputs.push_back(x);  // every guess right
    for (int row : {3, 40, 99}) x[row + std::size_t(100) * rows] = 0x1p10 * (r.uniform() + 0.5);
    inputs.push_back(x);  // three rows guessed low: three panels packed again
    for (int l = 0; l < cols; ++l) x[7 + std::size_t(l) * rows] = std::ldexp(r.uniform() + 0.5, -1060);
    x[7 + std::size_t(200) * rows] = 0x1p-1040;
    inputs.push_back(x);  // a subnormal row (two-step scaling), guessed low
    x[50 + std::size_t(100) * rows] = NAN;
    inputs.push_back(x);
    x[50 + std::size_t(100) * rows] = -INFINITY;
    inputs.push_back(x);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(r.uniform(), int(i % 90) - 45);
    inputs.push_back(x);  // spread: no guess, the scan first
    const std::vector<const SplitKernels*> tables = split_tables_here();
    for (const SplitKernels* sk : tables)
        for (const auto& in : inputs)
            for (int threads : {1, 2})
                for (int slices : {3, 8}) {
                    check_chunked_facts(in, rows, cols, 'N', true, *sk, slices, threads);
                    check_chunked_facts(in, cols, rows, 'T', false, *sk, slices, threads);
                }
}

void test_fp64_fused_pack_matches(void**) {
    const int rows = 70, cols = 45;
    kt::Rng r(17);
    std::vector<std::vector<double>> inputs;
    std::vector<double> x(std::size_t(rows) * cols);
    for (auto& e : x) e = r.uniform();
    inputs.push_back(x);
    for (auto& e : x) e = std::ldexp(r.uniform(), int(r.uniform() * 30));
    inputs.push_back(x);
    for (auto& e : x) e = double(float(r.uniform()));  // 24 bits: the chain ends at 3 or 4
    inputs.push_back(x);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? 0.75 : 0x1p-50 + 0x1p-100;
    inputs.push_back(x);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 7 == 0 ? -1.0 : 0x1p-12 * double(i % 5);
    inputs.push_back(x);
    inputs.push_back(std::vector<double>(x.size(), 0.0));
    for (auto& e : x) e = 0;
    x[3] = 0x1p-100 + 0x1p-140;
    inputs.push_back(x);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(r.uniform(), int(i % 11) * 200 - 1100);  // 2^-1100..2^900
    x[5] = 4.9e-324;
    x[6] = 0x1.fffffffffffffp1023;
    inputs.push_back(x);
    const std::vector<const SplitKernels*> tables = split_tables_here();
    for (const SplitKernels* sk : tables)
        for (const auto& in : inputs)
            for (char trans : {'N', 'T'})
                for (bool is_a : {true, false}) {
                    for (int slices : {3, 8})
                        check_fused_fp64(in, trans == 'N' ? rows : cols, trans == 'N' ? cols : rows, trans, is_a, *sk,
                                         slices);
                }
}

}  // namespace

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_rne_ties_to_even),
        cmocka_unit_test(test_bf16_rne_overflow_and_nan),
        cmocka_unit_test(test_fp32_split_reconstructs),
        cmocka_unit_test(test_fp64_split_bounds),
        cmocka_unit_test(test_fp64_split_odd),
        cmocka_unit_test(test_fp64_split_zero_and_powers),
        cmocka_unit_test(test_fp64_split_zeros_among_values),
        cmocka_unit_test(test_fp64_split_runs_value_by_value),
        cmocka_unit_test(test_fp64_split_extremes_normalised),
        cmocka_unit_test(test_avx512_split_bitwise),
        cmocka_unit_test(test_avx512_pack_bitwise),
        cmocka_unit_test(test_fp64_fused_pack_matches),
        cmocka_unit_test(test_fp64_chunked_facts_match),
        cmocka_unit_test(test_fp64_chunked_facts_match_across_chunks),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

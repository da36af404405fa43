// Reconstruction (kernels/isa/reconstruct.h): every table's widen_add and add_fp32 give the bits of
// the scalar definition -- acc := acc + (double)t * s, the product rounded, then the sum -- for
// random tiles and accumulators, row strides other than 32, and scales on both sides of the
// range where reconstruct_avx512.cc fuses the two roundings into one FMA, including the inputs
// where a fused multiply-add would give other bits (a subnormal product, an overflowing one); and
// write_fp64, C := alpha acc + beta C through the transposed accumulator.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/runtime/cpu_features.h"
#include "kernels/isa/microkernel.h"
#include "kernels/isa/reconstruct.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

// The definition, one rounding at a time (volatile: no contraction whatever the flags).
void widen_add_definition(const float* tiles, const double* scales, int count, double* acc, int ldacc) {
    for (int q = 0; q < count; ++q)
        for (int r = 0; r < kTile; ++r)
            for (int c = 0; c < kTile; ++c) {
                volatile double p = static_cast<double>(tiles[q * kStepElems + r * kTile + c]) * scales[q];
                acc[r * ldacc + c] = acc[r * ldacc + c] + p;
            }
}

std::vector<const ReconstructKernels*> tables() {
    std::vector<const ReconstructKernels*> t = {&reconstruct_kernels_portable(), &reconstruct_kernels()};
    if (cpu_has_avx512_split()) t.push_back(&reconstruct_kernels_avx512());
    return t;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Runs every table on the same tiles, scales and starting accumulator against the definition.
void check(const std::vector<float>& tiles, const std::vector<double>& scales, const std::vector<double>& acc0, int ldacc) {
    const int count = int(scales.size());
    std::vector<double> want = acc0;
    widen_add_definition(tiles.data(), scales.data(), count, want.data(), ldacc);
    for (const ReconstructKernels* k : tables()) {
        std::vector<double> got = acc0;
        k->widen_add(tiles.data(), scales.data(), count, got.data(), ldacc);
        assert_true(same_bits(got, want));
    }
}

float random_float(kt::Rng& g) {
    // Mostly the panel sums dgemm produces (multiples of 2^-16 below 2^8 in magnitude), some
    // anything finite, subnormals and signed zeros included.
    const int pick = g.below(16);
    if (pick == 0) return g.below(2) ? -0.0f : 0.0f;
    if (pick == 1) {
        std::uint32_t bits = std::uint32_t(g.next() >> 32);
        if ((bits & 0x7F800000u) == 0x7F800000u) bits &= 0xBF7FFFFFu;  // no inf or NaN
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
    return float(std::int64_t(g.next() >> 39) - (std::int64_t(1) << 24)) * 0x1p-16f;
}

void test_random_tiles_and_scales(void**) {
    kt::Rng g(12);
    const double pow2[] = {1.0, 0x1p-9, 0x1p-18, 0x1p-63, -0x1p-27, 0x1p-925, 0x1p895, 0.0, -0.0,
                           0x1p-926, 0x1p896, 0x1p897, 0x1p-1022, 0x1p-1060, 0x1p-1074, 3.0, 0x1.8p-20};
    for (int round = 0; round < 200; ++round) {
        const int count = 1 + g.below(8), ldacc = g.below(2) ? 256 : 40;
        std::vector<float> tiles(std::size_t(count) * kStepElems);
        for (float& t : tiles) t = random_float(g);
        std::vector<double> scales(count);
        // Half the rounds: only scales the FMA path takes; the others: any from the list.
        for (double& s : scales) s = pow2[g.below((round & 1) ? int(std::size(pow2)) : 7)];
        std::vector<double> acc(std::size_t(kTile) * ldacc);
        for (double& a : acc) a = g.below(4) == 0 ? 0.0 : std::ldexp(double(std::int64_t(g.next() >> 11)) - 0x1p52, -40);
        check(tiles, scales, acc, ldacc);
    }
}

// Inputs where fma(x, s, a) and a + x * s differ: the kernels must not fuse there.
void test_fma_would_differ(void**) {
    std::vector<float> tiles(std::size_t(3) * kStepElems, 0.0f);
    std::vector<double> acc(std::size_t(kTile) * kTile, 0.0);
    // A product 2^-1075 (half the smallest subnormal) rounds to 0; fused with 2^-1074 it ties
    // up to 2^-1073.
    tiles[0] = 0x1p-149f;
    acc[0] = 0x1p-1074;
    // A product that overflows to inf on its own but not beside -2^1023.
    tiles[1] = 0x1p127f;  // times 2^897: 2^1024
    acc[1] = -0x1p1023;
    volatile double p0 = double(tiles[0]) * 0x1p-926, p1 = double(tiles[1]) * 0x1p897;
    assert_true(acc[0] + p0 == 0x1p-1074);
    assert_true(std::isinf(acc[1] + p1));
    assert_true(std::fma(double(tiles[0]), 0x1p-926, acc[0]) == 0x1p-1073);
    assert_true(std::isfinite(std::fma(double(tiles[1]), 0x1p897, acc[1])));
    check(tiles, {0x1p-926}, acc, kTile);
    check(tiles, {0x1p897}, acc, kTile);
    for (int q = 1; q < 3; ++q) std::copy(tiles.begin(), tiles.begin() + kStepElems, tiles.begin() + q * kStepElems);
    check(tiles, {1.0, 0x1p-926, 0x1p-9}, acc, kTile);
    check(tiles, {0x1p-9, 0x1p897, 1.0}, acc, kTile);
}

void test_add_fp32(void**) {
    kt::Rng g(7);
    for (int ldacc : {32, 256}) {
        std::vector<float> tile(kStepElems), acc0(std::size_t(kTile) * ldacc);
        for (float& t : tile) t = random_float(g);
        for (float& a : acc0) a = random_float(g);
        std::vector<float> want = acc0;
        for (int r = 0; r < kTile; ++r)
            for (int c = 0; c < kTile; ++c) want[r * ldacc + c] = want[r * ldacc + c] + tile[r * kTile + c];
        for (const ReconstructKernels* k : tables()) {
            std::vector<float> got = acc0;
            k->add_fp32(tile.data(), got.data(), ldacc);
            assert_true(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
        }
    }
}

// write_fp64 (a routed call's write of C) against the definition, one rounding at a time: every
// block shape from 1 x 1 to 35 x 35 (the 8 x 8 blocks and both edges), beta 0 (C never read: NaN
// there does not survive) and not, and an alpha and beta whose products would round otherwise if
// fused.
void test_write_fp64(void**) {
    if (!cpu_has_avx512_split())
        print_message("no AVX-512 here: the portable tables' write_fp64 only, not the avx512 one\n");
    kt::Rng g(11);
    constexpr int kLd = 256, kLdc = 41;
    std::vector<double> acc(std::size_t(40) * kLd);
    for (double& a : acc) a = random_float(g) * (1 + 0x1p-30);
    for (int rows = 1; rows <= 35; rows += rows < 9 ? 1 : 13)
        for (int cols = 1; cols <= 35; cols += cols < 9 ? 1 : 13)
            for (const double beta : {0.0, -0.75 + 0x1p-40}) {
                const double alpha = 1.5 + 0x1p-45;
                std::vector<double> c0(std::size_t(kLdc) * 40);
                for (double& c : c0) c = beta == 0 ? NAN : random_float(g);
                std::vector<double> want = c0;
                for (int j = 0; j < cols; ++j)
                    for (int i = 0; i < rows; ++i) {
                        volatile double p = alpha * acc[std::size_t(i) * kLd + j];
                        volatile double q = beta == 0 ? 0.0 : beta * c0[i + std::size_t(j) * kLdc];
                        want[i + std::size_t(j) * kLdc] = beta == 0 ? double(p) : p + q;
                    }
                for (const ReconstructKernels* k : tables()) {
                    std::vector<double> got = c0;
                    k->write_fp64(acc.data(), kLd, rows, cols, alpha, beta, got.data(), kLdc);
                    for (std::size_t e = 0; e < got.size(); ++e)
                        if (std::memcmp(&got[e], &want[e], sizeof(double)) != 0)
                            fail_msg("rows %d cols %d beta %g: element %zu is %a, want %a", rows, cols, beta, e, got[e],
                                     want[e]);
                }
            }
}

}  // namespace

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_tiles_and_scales),
        cmocka_unit_test(test_fma_would_differ),
        cmocka_unit_test(test_add_fp32),
        cmocka_unit_test(test_write_fp64),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

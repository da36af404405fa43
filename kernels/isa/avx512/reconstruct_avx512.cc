// AVX-512 reconstruction: the same function as reconstruct.cc, a 32-wide row in four zmm of
// doubles (or two of floats). Built with -mavx512f only; called only when
// cpu_has_avx512_split() says so.
//
// widen_add: four accumulator rows (16 zmm, 16 independent chains) stay in registers while the
// count tiles are added to them in order; per eight values and tile, one load-and-widen
// (VCVTPS2PD) and one FMA. In the routed call the tiles come mostly from L2 (the micro-kernel's
// operand blocks evict them) and the accumulator from L2 or further: there it ran at 1.4-1.5e10
// values/s per core on the 2-core AVX-512 machine of docs/bench, against 2.4e10 with the tiles
// in L1. Four rows measured 5-10% faster than two and much faster than one tile at a time over
// all rows (the accumulator reloaded per tile: 0.35 against 0.21 ms in the same test).
//
// Why the FMA gives the bits of reconstruct.cc's multiply-then-add: fma(x, s, a) rounds
// a + x * s once, the portable code rounds x * s and then the sum, so the two agree whenever
// x * s is exact. It is, for every finite FP32 x, when s is zero or a power of two (of either
// sign) with 2^-925 <= |s| <= 2^895: x = m 2^E with |m| < 2^24 and -149 <= E <= 104, so
// x s = m 2^(E + e) with E + e >= -1074 (a multiple of the smallest subnormal) and
// |x s| < 2^(24 + 104 + 895) = 2^1023, which FP64 holds exactly; with s = 0 the product is an
// exact zero. The signs of zero agree as well (IEEE 754 gives fusedMultiplyAdd the addition's
// rule for an exact zero sum). The driver's factors 2^(vA(i) + vB(j)) are powers of two, inside
// that range for any ordinary input; where one is not (vA(i) + vB(j) < -925 can happen with
// entries 2^-900 apart in one operand), the whole call to widen_add takes the multiply-then-add
// loop, which is reconstruct.cc's arithmetic as written.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/isa/microkernel.h"
#include "kernels/isa/avx512/transpose_avx512.h"
#include "kernels/isa/reconstruct.h"

namespace amxblas::kernels {
namespace {

void add_fp32_avx512(const float* tile, float* acc, int ldacc) {
    for (int r = 0; r < kTile; ++r) {
        float* a = acc + std::size_t(r) * ldacc;
        const float* t = tile + r * kTile;
        _mm512_storeu_ps(a, _mm512_add_ps(_mm512_loadu_ps(a), _mm512_loadu_ps(t)));
        _mm512_storeu_ps(a + 16, _mm512_add_ps(_mm512_loadu_ps(a + 16), _mm512_loadu_ps(t + 16)));
    }
}

// s is 0, or +-2^e with -925 <= e <= 895 (see the top of the file).
bool fma_exact_scale(double s) {
    std::uint64_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    bits &= ~(std::uint64_t(1) << 63);
    if (bits == 0) return true;
    const std::uint64_t frac = bits & ((std::uint64_t(1) << 52) - 1);
    const int biased = int(bits >> 52);
    return frac == 0 && biased >= 1023 - 925 && biased <= 1023 + 895;
}

template <bool Fused>
inline __m512d widen_add8(__m512d a, const float* t, __m512d s) {
    const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(t));
    if constexpr (Fused) return _mm512_fmadd_pd(x, s, a);
    else return _mm512_add_pd(a, _mm512_mul_pd(x, s));
}

// kRows accumulator rows (4 kRows zmm) stay in registers while the count tiles are added.
constexpr int kRows = 4;

template <bool Fused>
void widen_add_rows(const float* tiles, const double* scales, int count, double* acc, int ldacc) {
    for (int r = 0; r < kTile; r += kRows) {
        __m512d s[4 * kRows];
        for (int i = 0; i < kRows; ++i)
            for (int j = 0; j < 4; ++j) s[4 * i + j] = _mm512_loadu_pd(acc + std::size_t(r + i) * ldacc + 8 * j);
        for (int q = 0; q < count; ++q) {
            const float* t = tiles + std::size_t(q) * kStepElems + r * kTile;  // rows r .. r + kRows - 1
            const __m512d sc = _mm512_set1_pd(scales[q]);
#pragma GCC unroll 16
            for (int i = 0; i < 4 * kRows; ++i) s[i] = widen_add8<Fused>(s[i], t + 8 * i, sc);
        }
        for (int i = 0; i < kRows; ++i)
            for (int j = 0; j < 4; ++j) _mm512_storeu_pd(acc + std::size_t(r + i) * ldacc + 8 * j, s[4 * i + j]);
    }
}

void widen_add_avx512(const float* tiles, const double* scales, int count, double* acc, int ldacc) {
    bool fused = true;
    for (int q = 0; q < count; ++q) fused = fused && fma_exact_scale(scales[q]);
    if (fused) widen_add_rows<true>(tiles, scales, count, acc, ldacc);
    else widen_add_rows<false>(tiles, scales, count, acc, ldacc);
}

// write_fp64_definition's arithmetic on 8 x 8 blocks: eight accumulator rows loaded, transposed
// in registers into eight C column segments, each element alpha * a (+ beta * c) rounded as
// there (this file is built with -ffp-contract=off, and the intrinsics below do not fuse). The
// edges take the definition.
void write_fp64_avx512(const double* acc, int ldacc, int rows, int cols, double alpha, double beta, double* c,
                       std::size_t ldc) {
    const int rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
    const __m512d va = _mm512_set1_pd(alpha), vb = _mm512_set1_pd(beta);
    for (int i = 0; i < rows8; i += 8)
        for (int j = 0; j < cols8; j += 8) {
            __m512d r[8];
            for (int q = 0; q < 8; ++q) r[q] = _mm512_loadu_pd(acc + std::size_t(i + q) * ldacc + j);
            avx512::transpose8x8_64(r);
            for (int q = 0; q < 8; ++q) {
                double* col = c + std::size_t(j + q) * ldc + i;
                const __m512d scaled = _mm512_mul_pd(va, r[q]);
                _mm512_storeu_pd(col, beta == 0 ? scaled : _mm512_add_pd(scaled, _mm512_mul_pd(vb, _mm512_loadu_pd(col))));
            }
        }
    if (cols8 < cols) write_fp64_definition(acc + cols8, ldacc, rows, cols - cols8, alpha, beta, c + std::size_t(cols8) * ldc, ldc);
    if (rows8 < rows) write_fp64_definition(acc + std::size_t(rows8) * ldacc, ldacc, rows - rows8, cols8, alpha, beta, c + rows8, ldc);
}

}  // namespace

const ReconstructKernels& reconstruct_kernels_avx512() {
    static const ReconstructKernels k{add_fp32_avx512, widen_add_avx512, write_fp64_avx512};
    return k;
}

}  // namespace amxblas::kernels

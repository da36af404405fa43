// AVX-512 split: the same function as split.cc, 16 floats / 8 doubles at a time, with a scalar
// tail through the portable table. Built with -mavx512f -mavx512bw -mavx512dq -mavx512vl only;
// called only when cpu_has_avx512_split() says so.
#include <immintrin.h>

#include <cmath>

#include "kernels/microkernel.h"
#include "kernels/split.h"

namespace amxblas::kernels {
namespace {

constexpr double kBf16MinNormal = 0x1p-126;
constexpr double kBf16MaxFinite = 0x1.FEp127;

// bf16_rne() on 16 lanes: the same carry trick, NaN lanes replaced by the quiet pattern.
inline __m256i rne16(__m512 x) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(int(kF32AbsMask)));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(int(kF32ExpMask)));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
    r = _mm512_srli_epi32(r, 16);
    const __m512i q = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(int(kBf16QuietBit)));
    r = _mm512_mask_mov_epi32(r, nan, q);
    return _mm512_cvtepi32_epi16(r);
}

inline __m512 bf16x16_to_float(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

void fp32_avx512(const float* x, std::size_t n, bf16_t* s0, bf16_t* s1, bf16_t* s2) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 r = _mm512_loadu_ps(x + i);
        const __m256i h0 = rne16(r);
        r = _mm512_sub_ps(r, bf16x16_to_float(h0));
        const __m256i h1 = rne16(r);
        r = _mm512_sub_ps(r, bf16x16_to_float(h1));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s0 + i), h0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s1 + i), h1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s2 + i), rne16(r));
    }
    if (i < n) split_kernels_portable().fp32(x + i, n - i, s0 + i, s1 + i, s2 + i);
}

inline __m512d ozaki_chunk8(__m512d x, __m512d sigma) {
    return _mm512_sub_pd(_mm512_add_pd(x, sigma), sigma);
}

AbsMax fp64_absmax_avx512(const double* x, std::size_t n, const Fp64Scales& sc, int r) {
    __m512d mx = _mm512_setzero_pd();
    __mmask8 nonfinite = 0;
    const __m512d inf = _mm512_set1_pd(INFINITY);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d v = _mm512_loadu_pd(x + i);
        // |x| < Inf is false for Inf and NaN (ordered, non-signalling compare).
        nonfinite |= __mmask8(~_mm512_cmp_pd_mask(_mm512_abs_pd(v), inf, _CMP_LT_OQ));
        for (int t = 0; t < r; ++t) v = _mm512_sub_pd(v, ozaki_chunk8(v, _mm512_set1_pd(sc.sigma[t])));
        mx = _mm512_max_pd(mx, _mm512_abs_pd(v));
    }
    AbsMax out;
    out.value = _mm512_reduce_max_pd(mx);
    out.nonfinite = nonfinite != 0;
    if (i < n) {
        const AbsMax tail = split_kernels_portable().fp64_absmax(x + i, n - i, sc, r);
        if (tail.value > out.value) out.value = tail.value;
        out.nonfinite = out.nonfinite || tail.nonfinite;
    }
    return out;
}

template <bool Track>
SliceStatus fp64_split_avx512(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                              double* resid_max) {
    const __m512d tiny = _mm512_set1_pd(kBf16MinNormal);
    const __m512d huge = _mm512_set1_pd(kBf16MaxFinite);
    const __m512d zero = _mm512_setzero_pd();
    __mmask8 subnormal = 0, overflow = 0;
    __m512d mx[kFp64Slices + 1];
    for (auto& m : mx) m = zero;
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512d v0 = _mm512_loadu_pd(x + i), v1 = _mm512_loadu_pd(x + i + 8);
        for (int t = 0; t < sc.slices; ++t) {
            if (Track) mx[t] = _mm512_max_pd(mx[t], _mm512_max_pd(_mm512_abs_pd(v0), _mm512_abs_pd(v1)));
            if (t >= sc.active) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(s[t] + i), _mm256_setzero_si256());
                continue;
            }
            const __m512d sigma = _mm512_set1_pd(sc.sigma[t]), norm = _mm512_set1_pd(sc.norm[t]);
            const __m512d c0 = ozaki_chunk8(v0, sigma), c1 = ozaki_chunk8(v1, sigma);
            const __m512d z0 = _mm512_mul_pd(c0, norm), z1 = _mm512_mul_pd(c1, norm);
            const __m512d a0 = _mm512_abs_pd(z0), a1 = _mm512_abs_pd(z1);
            subnormal |= _mm512_cmp_pd_mask(a0, tiny, _CMP_LT_OQ) & _mm512_cmp_pd_mask(a0, zero, _CMP_NEQ_OQ);
            subnormal |= _mm512_cmp_pd_mask(a1, tiny, _CMP_LT_OQ) & _mm512_cmp_pd_mask(a1, zero, _CMP_NEQ_OQ);
            overflow |= _mm512_cmp_pd_mask(a0, huge, _CMP_GT_OQ) | _mm512_cmp_pd_mask(a1, huge, _CMP_GT_OQ);
            // Round-to-nearest double -> float (default MXCSR, as the portable cast), then RNE.
            const __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(z0)), _mm512_cvtpd_ps(z1), 1);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(s[t] + i), rne16(f));
            v0 = _mm512_sub_pd(v0, c0);
            v1 = _mm512_sub_pd(v1, c1);
        }
        if (Track)
            mx[sc.slices] = _mm512_max_pd(mx[sc.slices], _mm512_max_pd(_mm512_abs_pd(v0), _mm512_abs_pd(v1)));
    }
    int worst = overflow ? 2 : (subnormal ? 1 : 0);
    if (Track)
        for (int t = 0; t <= sc.slices; ++t) {
            const double m = _mm512_reduce_max_pd(mx[t]);
            if (m > resid_max[t]) resid_max[t] = m;
        }
    if (i < n) {
        bf16_t* tail[kFp64Slices] = {};
        for (int t = 0; t < sc.slices; ++t) tail[t] = s[t] + i;
        const SplitKernels& p = split_kernels_portable();
        const int w = static_cast<int>(Track ? p.fp64_tracked(x + i, n - i, sc, tail, resid_max)
                                             : p.fp64(x + i, n - i, sc, tail));
        worst = w > worst ? w : worst;
    }
    return static_cast<SliceStatus>(worst);
}

SliceStatus fp64_avx512(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices]) {
    return fp64_split_avx512<false>(x, n, sc, s, nullptr);
}

SliceStatus fp64_tracked_avx512(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                                double resid_max[kFp64Slices + 1]) {
    return fp64_split_avx512<true>(x, n, sc, s, resid_max);
}

// --- Gathers (pack.h's block layouts) with in-register transposes. -----------------------

// r[0..15] := its transpose, 32-bit elements: r[j] lane i = old r[i] lane j.
inline void transpose16x16_32(__m512 r[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    // u[4g + c], 128-bit lane L: column 4L + c of rows 4g..4g+3.
    for (int g = 0; g < 16; g += 4) {
        const __m512d t0 = _mm512_castps_pd(t[g]), t1 = _mm512_castps_pd(t[g + 1]);
        const __m512d t2 = _mm512_castps_pd(t[g + 2]), t3 = _mm512_castps_pd(t[g + 3]);
        u[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
        u[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
        u[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
        u[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
    for (int c = 0; c < 4; ++c) {
        const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
        const __m512 w0 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
        const __m512 w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
        r[c] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
        r[4 + c] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[12 + c] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
    }
}

// r[0..7] := its transpose, 64-bit elements.
inline void transpose8x8_64(__m512d r[8]) {
    __m512d t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);      // lanes: cols 0, 2, 4, 6 of rows i, i+1
        t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);  // cols 1, 3, 5, 7
    }
    for (int g = 0; g < 8; g += 4)
        for (int h = 0; h < 2; ++h) {
            u[g + 2 * h] = _mm512_shuffle_f64x2(t[g + h], t[g + h + 2], 0x88);
            u[g + 2 * h + 1] = _mm512_shuffle_f64x2(t[g + h], t[g + h + 2], 0xDD);
        }
    // u[g + 0]: cols 0, 4; u[g + 1]: cols 2, 6; u[g + 2]: cols 1, 5; u[g + 3]: cols 3, 7.
    const int col_of[4] = {0, 2, 1, 3};
    for (int q = 0; q < 4; ++q) {
        r[col_of[q]] = _mm512_shuffle_f64x2(u[q], u[4 + q], 0x88);
        r[col_of[q] + 4] = _mm512_shuffle_f64x2(u[q], u[4 + q], 0xDD);
    }
}

// r[0..3] := its transpose, 128-bit elements (pairs of doubles).
inline void transpose4x4_128(__m512d r[4]) {
    const __m512d v0 = _mm512_shuffle_f64x2(r[0], r[1], 0x88), v1 = _mm512_shuffle_f64x2(r[0], r[1], 0xDD);
    const __m512d w0 = _mm512_shuffle_f64x2(r[2], r[3], 0x88), w1 = _mm512_shuffle_f64x2(r[2], r[3], 0xDD);
    r[0] = _mm512_shuffle_f64x2(v0, w0, 0x88);
    r[2] = _mm512_shuffle_f64x2(v0, w0, 0xDD);
    r[1] = _mm512_shuffle_f64x2(v1, w1, 0x88);
    r[3] = _mm512_shuffle_f64x2(v1, w1, 0xDD);
}

void gather_fp32_avx512(BlockSource kind, const float* src, std::size_t ld, float* tile) {
    switch (kind) {
        case BlockSource::a_t:
            for (int r = 0; r < kTile; ++r) {
                _mm512_store_ps(tile + r * kTile, _mm512_loadu_ps(src + r * ld));
                _mm512_store_ps(tile + r * kTile + 16, _mm512_loadu_ps(src + r * ld + 16));
            }
            return;
        case BlockSource::a_n:
            // Quadrant (rows R.., K kk..): 16 column pieces in, 16 row pieces out.
            for (int R = 0; R < kTile; R += 16)
                for (int K = 0; K < kTile; K += 16) {
                    __m512 q[16];
                    for (int i = 0; i < 16; ++i) q[i] = _mm512_loadu_ps(src + R + (K + i) * ld);
                    transpose16x16_32(q);
                    for (int i = 0; i < 16; ++i) _mm512_store_ps(tile + (R + i) * kTile + K, q[i]);
                }
            return;
        case BlockSource::b_n:
            // A K pair of one column is one 64-bit unit; half h is a 16x16 transpose of them,
            // done as four 8x8 ones: columns N.., pairs P.. -> rows P.., columns N...
            for (int h = 0; h < 2; ++h)
                for (int N = 0; N < 16; N += 8)
                    for (int P = 0; P < 16; P += 8) {
                        __m512d q[8];
                        for (int i = 0; i < 8; ++i) q[i] = _mm512_loadu_pd(reinterpret_cast<const double*>(src + 2 * P + (16 * h + N + i) * ld));
                        transpose8x8_64(q);
                        for (int i = 0; i < 8; ++i)
                            _mm512_store_pd(reinterpret_cast<double*>(tile + h * kHalfElems + (P + i) * kTile + 2 * N), q[i]);
                    }
            return;
        case BlockSource::b_t: {
            const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
            for (int p = 0; p < kTile / 2; ++p)
                for (int h = 0; h < 2; ++h) {
                    const __m512 e0 = _mm512_loadu_ps(src + 16 * h + (2 * p) * ld);
                    const __m512 e1 = _mm512_loadu_ps(src + 16 * h + (2 * p + 1) * ld);
                    float* dst = tile + h * kHalfElems + p * kTile;
                    _mm512_store_ps(dst, _mm512_permutex2var_ps(e0, lo, e1));
                    _mm512_store_ps(dst + 16, _mm512_permutex2var_ps(e0, hi, e1));
                }
            return;
        }
    }
}

void gather_fp64_avx512(BlockSource kind, const double* src, std::size_t ld, double* tile) {
    switch (kind) {
        case BlockSource::a_t:
            for (int r = 0; r < kTile; ++r)
                for (int q = 0; q < kTile; q += 8) _mm512_store_pd(tile + r * kTile + q, _mm512_loadu_pd(src + r * ld + q));
            return;
        case BlockSource::a_n:
            for (int R = 0; R < kTile; R += 8)
                for (int K = 0; K < kTile; K += 8) {
                    __m512d q[8];
                    for (int i = 0; i < 8; ++i) q[i] = _mm512_loadu_pd(src + R + (K + i) * ld);
                    transpose8x8_64(q);
                    for (int i = 0; i < 8; ++i) _mm512_store_pd(tile + (R + i) * kTile + K, q[i]);
                }
            return;
        case BlockSource::b_n:
            // A K pair of one column is one 128-bit unit; half h is a 16x16 transpose of them,
            // done as 4x4 ones: columns N.., pairs P.. -> rows P.., columns N...
            for (int h = 0; h < 2; ++h)
                for (int N = 0; N < 16; N += 4)
                    for (int P = 0; P < 16; P += 4) {
                        __m512d q[4];
                        for (int i = 0; i < 4; ++i) q[i] = _mm512_loadu_pd(src + 2 * P + (16 * h + N + i) * ld);
                        transpose4x4_128(q);
                        for (int i = 0; i < 4; ++i) _mm512_store_pd(tile + h * kHalfElems + (P + i) * kTile + 2 * N, q[i]);
                    }
            return;
        case BlockSource::b_t: {
            const __m512i lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
            const __m512i hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
            for (int p = 0; p < kTile / 2; ++p)
                for (int c = 0; c < kTile; c += 8) {
                    const __m512d e0 = _mm512_loadu_pd(src + c + (2 * p) * ld);
                    const __m512d e1 = _mm512_loadu_pd(src + c + (2 * p + 1) * ld);
                    double* dst = tile + (c / 16) * kHalfElems + p * kTile + (c % 16) * 2;
                    _mm512_store_pd(dst, _mm512_permutex2var_pd(e0, lo, e1));
                    _mm512_store_pd(dst + 8, _mm512_permutex2var_pd(e0, hi, e1));
                }
            return;
        }
    }
}

}  // namespace

const SplitKernels& split_kernels_avx512() {
    static const SplitKernels k{fp32_avx512,        fp64_absmax_avx512, fp64_avx512, fp64_tracked_avx512,
                                gather_fp32_avx512, gather_fp64_avx512};
    return k;
}

}  // namespace amxblas::kernels

// In-register transposes of AVX-512 registers, shared by the gathers of pack_gather_avx512.cc
// and int8_residues_avx512.cc. Include only from files built with the AVX-512 flags
// (kernels/CMakeLists.txt). Pure data movement.
#pragma once

#include <immintrin.h>

namespace amxblas::kernels::avx512 {

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

}  // namespace amxblas::kernels::avx512

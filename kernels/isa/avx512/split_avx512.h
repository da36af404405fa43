// The FP32 split of 16 values in AVX-512 registers, shared by split_avx512.cc (the split of a
// contiguous run) and pack_gather_avx512.cc (the fused gather + split, which splits each
// register as its transpose leaves it). Include only from files built with the AVX-512 flags
// (kernels/CMakeLists.txt); the functions compute bf16_rne() and Eq. (8) of split.h bit for bit.
#pragma once

#include <immintrin.h>

#include "kernels/common/bf16.h"

namespace amxblas::kernels::avx512 {

// The upper 16 bits of each 32-bit lane, in order: one word permutation (a shift and a
// narrowing move cost three times as much).
inline __m256i upper_halves(__m512i r) {
    const __m512i odd = _mm512_setr_epi32(0x30001, 0x70005, 0xB0009, 0xF000D, 0x130011, 0x170015, 0x1B0019, 0x1F001D, 0,
                                          0, 0, 0, 0, 0, 0, 0);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi16(odd, r));
}

// bf16_rne() on 16 lanes: the same carry trick, NaN lanes replaced by the quiet pattern.
inline __m256i rne16(__m512 x) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(int(kF32AbsMask)));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(int(kF32ExpMask)));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(u, _mm512_set1_epi32(int(kBf16QuietBit) << 16)));
    return upper_halves(r);
}

inline __m512 bf16x16_to_float(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// The pattern u rounded to nearest even at bit 16 by the carry of bf16_rne(): its upper half
// is bf16_rne() of a non-NaN value, and with the lower half cleared it is that BF16 as FP32.
inline __m512i rne_carry(__m512i u) {
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
}

// Magnitudes (as patterns) below this round to a finite BF16 value (0x7F7F8000 itself rounds
// to Inf).
constexpr int kF32RoundsFinite = 0x7F7F8000;

// Eq. (8) on 16 lanes: s_r = bf16_rne(x^(r)), x^(r+1) = x^(r) - s_r in FP32, r = 0, 1, 2.
// When every |x| rounds to a finite BF16 value, x^(1) and x^(2) are finite and small, no lane
// is NaN at any step, and each rounding is the carry alone (3 fewer operations than rne16 and
// no round trip through 16 bits); otherwise the general path with rne16.
inline void split_fp32_16(__m512 x, __m256i* s0, __m256i* s1, __m256i* s2) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(int(kF32AbsMask)));
    if (_mm512_cmpge_epu32_mask(abs, _mm512_set1_epi32(kF32RoundsFinite)) == 0) {
        const __m512i hi = _mm512_set1_epi32(int(0xFFFF0000u));
        const __m512i r0 = rne_carry(u);
        const __m512 x1 = _mm512_sub_ps(x, _mm512_castsi512_ps(_mm512_and_si512(r0, hi)));
        const __m512i r1 = rne_carry(_mm512_castps_si512(x1));
        const __m512 x2 = _mm512_sub_ps(x1, _mm512_castsi512_ps(_mm512_and_si512(r1, hi)));
        const __m512i r2 = rne_carry(_mm512_castps_si512(x2));
        *s0 = upper_halves(r0);
        *s1 = upper_halves(r1);
        *s2 = upper_halves(r2);
        return;
    }
    __m512 r = x;
    *s0 = rne16(r);
    r = _mm512_sub_ps(r, bf16x16_to_float(*s0));
    *s1 = rne16(r);
    r = _mm512_sub_ps(r, bf16x16_to_float(*s1));
    *s2 = rne16(r);
}

}  // namespace amxblas::kernels::avx512

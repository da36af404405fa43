// The INT8 engine's residues (Int8ResidueLoops::residues, kernels/isa/int8_residue_loops.h) from
// each value's bytes, on AVX-512 VNNI: one VPDPBUSD pair gives a residue of 16 values.
//
// Every value q of a block is an integer below 2^62 in magnitude once rounded (the halves of a
// basis of up to 16 moduli are at most 62 bits: int8_residues_vnni_takes). u = q + 2^62 is then a
// nonnegative 64-bit integer, and its little-endian bytes u_0 .. u_7 are its digits in base 256:
//
//     q = sum_d u_d 256^d - 2^62,   so   q = t  (mod m),   t = sum_d u_d T_d - (2^62 mod m),
//
// with T_d = 256^d mod m as a symmetric residue (|T_d| <= 127: CrtBasis::byte_pow) and 2^62 mod m
// likewise (CrtBasis::minus_2_62). VPDPBUSD multiplies four unsigned bytes of u by four signed
// bytes of T and adds them to a 32-bit lane, exactly: |t| <= 8 * 255 * 127 + 127 < 2^18. For an
// odd m, the symmetric residue t - m round(t / m) is then exact in FP32: |t / m| < 2^11, so
// fl(t fl(1/m)) is within 2^-12 of t / m, which lies at least 1 / (2m) >= 2^-9 from every
// half-integer (an odd denominator), so the rounded quotient is the nearest integer, and the
// product and difference are integers below 2^24. For m = 256 the residue is u_0 itself, q's low
// byte. These are the residues of the generic loops, bit for bit
// (tests/kernels/isa/kernels_int8_residues_test.cc compares every build).
//
// Per 16 values and modulus: two VPDPBUSD, a conversion, a multiply, a rounding, a fused
// multiply-add and a truncation to bytes, about half the operations of the FP64 loop (whose q is
// cut into 32-bit pieces and reduced in FP64, eight values a vector).
//
// Built with -mavx512vnni on this file alone (kernels/isa/avx512/sources.cmake); called only where
// cpu_has_avx512_vnni() (kernels/isa/avx512/int8_residues_avx512.cc).
#include "kernels/isa/avx512/int8_residues_vnni.h"

#include <immintrin.h>

namespace amxblas::kernels::detail {

bool int8_residues_vnni_takes(const CrtBasis& basis) {
    // A value's magnitude is below 2^(h - 1) for the larger half h (docs/fp64-int8.md, Section 2).
    return basis.range_bits - basis.range_bits / 2 - 1 <= 62;
}

void int8_residues_vnni(const double* v, const CrtBasis& basis, std::int8_t* const* out, std::size_t at) {
    constexpr int kValues = kInt8BlockValues, kVectors = kValues / 16;
    constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    // u's low and high dwords, 16 values a vector: even and odd dwords of two vectors of u.
    alignas(64) __m512i lo[kVectors], hi[kVectors];
    const __m512i offset = _mm512_set1_epi64(std::int64_t(1) << 62);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    for (int i = 0; i < kVectors; ++i) {
        // Rounded to nearest, ties to even, whatever the MXCSR says: the generic loops' round.
        const __m512i u0 = _mm512_add_epi64(_mm512_cvt_roundpd_epi64(_mm512_loadu_pd(v + 16 * i), kNearest), offset);
        const __m512i u1 = _mm512_add_epi64(_mm512_cvt_roundpd_epi64(_mm512_loadu_pd(v + 16 * i + 8), kNearest), offset);
        lo[i] = _mm512_permutex2var_epi32(u0, even, u1);
        hi[i] = _mm512_permutex2var_epi32(u0, odd, u1);
    }
    // t + 1.5 2^23: an FP32 whose low mantissa byte is t's (|t| < 2^22), as the FP64 loops' bias.
    const __m512 bias = _mm512_set1_ps(0x1.8p23f);
    for (int l = 0; l < basis.count; ++l) {
        std::int8_t* o = out[l] + at;
        if (basis.m[l] == 256) {
            for (int i = 0; i < kVectors; ++i)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16 * i), _mm512_cvtepi32_epi8(lo[i]));
            continue;
        }
        const __m512i start = _mm512_set1_epi32(basis.minus_2_62[l]);
        const __m512i pow_lo = _mm512_set1_epi32(basis.byte_pow[l][0]), pow_hi = _mm512_set1_epi32(basis.byte_pow[l][1]);
        const __m512 m = _mm512_set1_ps(float(basis.m[l])), inv = _mm512_set1_ps(1.0f / float(basis.m[l]));
#pragma GCC unroll 4
        for (int i = 0; i < kVectors; ++i) {
            const __m512i t = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(start, lo[i], pow_lo), hi[i], pow_hi);
            const __m512 tf = _mm512_cvtepi32_ps(t);
            const __m512 quotient = _mm512_roundscale_ps(_mm512_mul_ps(tf, inv), kNearest);
            const __m512 biased = _mm512_fnmadd_ps(quotient, m, _mm512_add_ps(tf, bias));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 16 * i), _mm512_cvtepi32_epi8(_mm512_castps_si512(biased)));
        }
    }
}

}  // namespace amxblas::kernels::detail

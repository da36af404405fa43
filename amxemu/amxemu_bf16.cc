// TDPBF16PS arithmetic (see amxemu_bf16.h): the scalar definition, and the same operations on
// AVX2 and FMA registers, 8 columns at a time, which the tests run under the harness take: it
// costs about a tenth of the scalar loop's 8192 calls to fmaf per full tile, which took more
// time than the trap itself.
#include "amxemu/amxemu_bf16.h"

#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstring>

namespace amxemu {
namespace {

constexpr int kMaxRows = 16;
constexpr int kMaxN = 16;  // dword (FP32) columns of dst

// ---------------------------------------------------------------------------------------------
// The scalar definition. Tininess is detected after rounding, as x86 does.
float bits_to_float(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof(f));
    return f;
}

uint32_t float_to_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof(b));
    return b;
}

float daz_fp32(float v) {
    const uint32_t b = float_to_bits(v);
    if ((b & 0x7f800000u) == 0) return bits_to_float(b & 0x80000000u);
    return v;
}

float bf16_daz(uint16_t h) {
    if ((h & 0x7f80u) == 0) h &= 0x8000u;
    return bits_to_float(uint32_t(h) << 16);
}

float ftz(float r) { return std::fabs(r) < FLT_MIN ? std::copysign(0.0f, r) : r; }

// Round-to-nearest-even a*b + c once, then flush a tiny result. fmaf rounds to the subnormal
// grid; a result of magnitude FLT_MIN may come from an exact value that, rounded to 24 bits
// with an unbounded exponent, stays below FLT_MIN (tiny after rounding): below
// FLT_MIN - 2^-151 it is flushed. The product of two bf16 is exact in double and the sum is
// exact in double in that range.
float fma_daz_ftz(float a, float b, float c) {
    const float r = std::fma(a, b, c);
    const float mag = std::fabs(r);
    if (mag < FLT_MIN) return std::copysign(0.0f, r);
    if (mag == FLT_MIN) {
        const double exact = double(a) * double(b) + double(c);
        if (std::fabs(exact) < 0x1.ffffffp-127) return std::copysign(0.0f, r);
    }
    return r;
}

float add_daz_ftz(float a, float b) { return ftz(daz_fp32(a) + daz_fp32(b)); }

uint16_t bf16_at(const uint8_t* row, int idx) {
    uint16_t h;
    std::memcpy(&h, row + 2 * idx, sizeof(h));
    return h;
}

void dot_tile_scalar(int rows, int n_out, int k_pairs, uint8_t (*dst)[64], const uint8_t (*src1)[64],
                     const uint8_t (*src2)[64]) {
    for (int m = 0; m < rows; ++m) {
        // The SDM's order: two FP32 chains per output (even and odd bf16 of each pair), each
        // fused-multiply-added along K from zero, then chain sum, then added to srcdest.
        float even[kMaxN] = {};
        float odd[kMaxN] = {};
        for (int k = 0; k < k_pairs; ++k) {
            const float a0 = bf16_daz(bf16_at(src1[m], 2 * k + 0));
            const float a1 = bf16_daz(bf16_at(src1[m], 2 * k + 1));
            for (int n = 0; n < n_out; ++n) {
                const float b0 = bf16_daz(bf16_at(src2[k], 2 * n + 0));
                const float b1 = bf16_daz(bf16_at(src2[k], 2 * n + 1));
                even[n] = fma_daz_ftz(a0, b0, even[n]);
                odd[n] = fma_daz_ftz(a1, b1, odd[n]);
            }
        }
        for (int n = 0; n < n_out; ++n) {
            float acc;
            std::memcpy(&acc, dst[m] + 4 * n, sizeof(acc));
            acc = add_daz_ftz(acc, add_daz_ftz(even[n], odd[n]));
            std::memcpy(dst[m] + 4 * n, &acc, sizeof(acc));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The vector path: the same operations per column, in the same order. An FMA rounds once
// whichever unit runs it, and so does an add; flushing is a select. The one case the select
// cannot decide, a result of magnitude exactly FLT_MIN, goes to fma_daz_ftz lane by lane. A NaN
// input makes the whole instruction take the scalar path: with two NaN operands, which payload
// an FMA returns depends on the operands' order, which the compiler chooses; without NaN inputs,
// every NaN produced is the default one.
#define AMXEMU_AVX2 __attribute__((target("avx2,fma")))

// Any bf16 NaN among `rows` rows of 32 bf16 (exponent all ones, mantissa nonzero).
AMXEMU_AVX2 bool any_bf16_nan(const uint8_t (*t)[64], int rows) {
    const __m256i magnitude = _mm256_set1_epi16(0x7fff), inf = _mm256_set1_epi16(0x7f80);
    __m256i found = _mm256_setzero_si256();
    for (int r = 0; r < rows; ++r)
        for (int h = 0; h < 2; ++h) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t[r] + 32 * h));
            found = _mm256_or_si256(found, _mm256_cmpgt_epi16(_mm256_and_si256(v, magnitude), inf));
        }
    return !_mm256_testz_si256(found, found);
}

// Any FP32 NaN among `rows` rows of 16 FP32.
AMXEMU_AVX2 bool any_fp32_nan(const uint8_t (*t)[64], int rows) {
    const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    __m256i found = _mm256_setzero_si256();
    for (int r = 0; r < rows; ++r)
        for (int h = 0; h < 2; ++h) {
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t[r] + 32 * h));
            found = _mm256_or_si256(found, _mm256_cmpgt_epi32(_mm256_and_si256(v, magnitude), inf));
        }
    return !_mm256_testz_si256(found, found);
}

// DAZ: a value with a zero exponent keeps only its sign.
AMXEMU_AVX2 __m256 daz8(__m256 x) {
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i zero_exponent =
        _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7f800000)), _mm256_setzero_si256());
    return _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_and_si256(zero_exponent, _mm256_set1_epi32(0x7fffffff)), bits));
}

// ftz: a magnitude below FLT_MIN keeps only its sign (NaN compares false and stays).
AMXEMU_AVX2 __m256 ftz8(__m256 r) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(int(0x80000000u)));
    const __m256 tiny = _mm256_cmp_ps(_mm256_andnot_ps(sign, r), _mm256_set1_ps(FLT_MIN), _CMP_LT_OQ);
    return _mm256_blendv_ps(r, _mm256_and_ps(r, sign), tiny);
}

// fma_daz_ftz on 8 columns: a * b + c, a and b already DAZ.
AMXEMU_AVX2 __m256 fma8(float a, __m256 b, __m256 c) {
    const __m256 r = ftz8(_mm256_fmadd_ps(_mm256_set1_ps(a), b, c));
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(int(0x80000000u)));
    const int edge = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, r), _mm256_set1_ps(FLT_MIN), _CMP_EQ_OQ));
    if (!edge) return r;
    alignas(32) float rs[8], bs[8], cs[8];
    _mm256_store_ps(rs, r);
    _mm256_store_ps(bs, b);
    _mm256_store_ps(cs, c);
    for (int l = 0; l < 8; ++l)
        if (edge & (1 << l)) rs[l] = fma_daz_ftz(a, bs[l], cs[l]);
    return _mm256_load_ps(rs);
}

AMXEMU_AVX2 bool dot_tile_avx2(int rows, int n_out, int k_pairs, uint8_t (*dst)[64], const uint8_t (*src1)[64],
                               const uint8_t (*src2)[64]) {
    if (any_bf16_nan(src1, rows) || any_bf16_nan(src2, k_pairs) || any_fp32_nan(dst, rows)) return false;
    // src2's row k holds (b0, b1) pairs, one per dword column: b0 in the low half.
    __m256 b0[kMaxRows][2], b1[kMaxRows][2];
    for (int k = 0; k < k_pairs; ++k)
        for (int h = 0; h < 2; ++h) {
            const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src2[k] + 32 * h));
            b0[k][h] = daz8(_mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16)));
            b1[k][h] = daz8(_mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(int(0xffff0000u)))));
        }
    for (int m = 0; m < rows; ++m) {
        __m256 even[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        __m256 odd[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int k = 0; k < k_pairs; ++k) {
            const float a0 = bf16_daz(bf16_at(src1[m], 2 * k + 0));
            const float a1 = bf16_daz(bf16_at(src1[m], 2 * k + 1));
            for (int h = 0; h < 2; ++h) {
                even[h] = fma8(a0, b0[k][h], even[h]);
                odd[h] = fma8(a1, b1[k][h], odd[h]);
            }
        }
        alignas(32) float out[kMaxN];
        for (int h = 0; h < 2; ++h) {
            const __m256 acc = _mm256_loadu_ps(reinterpret_cast<const float*>(dst[m] + 32 * h));
            const __m256 chains = ftz8(_mm256_add_ps(daz8(even[h]), daz8(odd[h])));
            _mm256_store_ps(out + 8 * h, ftz8(_mm256_add_ps(daz8(acc), daz8(chains))));
        }
        std::memcpy(dst[m], out, 4 * std::size_t(n_out));
    }
    return true;
}

}  // namespace

bool bf16_vector_path_runs(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

void bf16_dot_tile(int rows, int n_out, int k_pairs, uint8_t (*dst)[64], const uint8_t (*src1)[64],
                   const uint8_t (*src2)[64], bool vector) {
    if (vector && dot_tile_avx2(rows, n_out, k_pairs, dst, src1, src2)) return;
    dot_tile_scalar(rows, n_out, k_pairs, dst, src1, src2);
}

}  // namespace amxemu

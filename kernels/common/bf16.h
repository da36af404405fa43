// BF16 as this library sees it: the upper 16 bits of an IEEE binary32, stored as uint16_t.
//
// The one software definition of round-to-nearest-even FP32 -> BF16. Every split path (portable
// and AVX-512) must produce the same bits as bf16_rne(), so the vector code in
// split_avx512.cc is written to compute exactly this function, and tests compare them.
#pragma once

#include <cstdint>
#include <cstring>

namespace amxblas::kernels {

using bf16_t = std::uint16_t;

inline std::uint32_t float_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

inline float bits_float(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

// Exact: every BF16 value is an FP32 value with the low 16 bits zero.
inline float bf16_to_float(bf16_t h) { return bits_float(std::uint32_t(h) << 16); }

constexpr std::uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr std::uint32_t kF32ExpMask = 0x7F800000u;
constexpr std::uint32_t kBf16QuietBit = 0x0040u;  // top mantissa bit of a BF16 NaN

// Round to nearest, ties to even. Adding 0x7FFF plus the lowest kept bit to the FP32 pattern
// carries into bit 16 exactly when the discarded half is above the tie, or at the tie with an
// odd kept part; the carry propagates into the exponent, so the largest finite values round to
// Inf as IEEE requires. NaN is handled first (the carry could turn a NaN into Inf) and is
// returned quiet with its sign and top payload bits kept.
inline bf16_t bf16_rne(float x) {
    const std::uint32_t u = float_bits(x);
    if ((u & kF32AbsMask) > kF32ExpMask) return bf16_t((u >> 16) | kBf16QuietBit);
    const std::uint32_t lsb = (u >> 16) & 1u;
    return bf16_t((u + 0x7FFFu + lsb) >> 16);
}

// The BF16 dot-product instructions treat denormal inputs as zero (DAZ).
inline bool bf16_is_denormal(bf16_t h) { return (h & 0x7F80u) == 0 && (h & 0x007Fu) != 0; }

}  // namespace amxblas::kernels

#include "kernels/int8/crt_reconstruct.h"

#include <cmath>

#include "kernels/common/pow2.h"
#include "kernels/isa/isa.h"

namespace amxblas::kernels {
namespace {

// x rounded to the nearest FP64, ties to even.
double round_int128(__int128 x) {
    const bool neg = x < 0;
    const unsigned __int128 mag = neg ? -(unsigned __int128)x : (unsigned __int128)x;
    const std::uint64_t hi = std::uint64_t(mag >> 64);
    const int bits = hi ? 128 - __builtin_clzll(hi) : (mag ? 64 - __builtin_clzll(std::uint64_t(mag)) : 0);
    double r;
    if (bits <= 53) {
        r = double(std::uint64_t(mag));
    } else {
        const int shift = bits - 53;
        std::uint64_t keep = std::uint64_t(mag >> shift);
        const unsigned __int128 one = 1;
        const unsigned __int128 rest = mag & ((one << shift) - 1), half = one << (shift - 1);
        if (rest > half || (rest == half && (keep & 1))) ++keep;  // may reach 2^53: still exact
        r = double(keep) * pow2(shift);  // shift < 75
    }
    return neg ? -r : r;
}

}  // namespace

double round_to_double(const Wide& x) {
    // Balanced 40-bit limbs of x, then the top three limbs and the sign of the rest, as
    // crt_to_double rounds (kernels/isa/int8_residue_loops.inc), here in 128-bit integers.
    const bool neg = x.negative();
    Wide mag = x;
    if (neg) {
        unsigned __int128 carry = 1;
        for (int i = 0; i < 3; ++i) {
            const unsigned __int128 t = (unsigned __int128)(~x.w[i]) + carry;
            mag.w[i] = std::uint64_t(t);
            carry = t >> 64;
        }
    }
    // mag < 2^191: its value is sum_j limb_j 2^(40 j) with limbs in [0, 2^40).
    std::int64_t limbs[kCrtLimbs];
    for (int j = 0; j < kCrtLimbs; ++j) {
        const int bit = kCrtLimbBits * j, word = bit / 64, off = bit % 64;
        unsigned __int128 two = mag.w[word];
        if (word + 1 < 3) two |= (unsigned __int128)mag.w[word + 1] << 64;
        limbs[j] = std::int64_t(std::uint64_t(two >> off) & ((std::uint64_t(1) << kCrtLimbBits) - 1));
    }
    int top = kCrtLimbs - 1;
    while (top > 0 && limbs[top] == 0) --top;
    double r;
    if (top <= 2) {
        __int128 v = 0;
        for (int j = top; j >= 0; --j) v = (v << kCrtLimbBits) + limbs[j];
        r = round_int128(v);
    } else {
        const __int128 t3 = ((__int128)limbs[top] << 80) + ((__int128)limbs[top - 1] << 40) + limbs[top - 2];
        bool rest = false;
        for (int j = top - 3; j >= 0; --j) rest = rest || limbs[j] != 0;
        r = std::ldexp(round_int128(2 * t3 + (rest ? 1 : 0)), kCrtLimbBits * (top - 2) - 1);
    }
    return neg ? -r : r;
}

Wide crt_value(const CrtBasis& b, const std::int32_t* c, std::size_t stride) {
    Wide sum;
    double frac = 0;
    for (int l = 0; l < b.count; ++l) {
        const int m = b.m[l];
        int r = int(c[l * stride] % m);
        r += r < 0 ? m : 0;
        const int y = int((long(r) * b.q[l]) % m);
        frac += y * b.inv_m[l];
        add_mul(sum, b.w[l], std::uint32_t(y));  // modulo 2^192
    }
    sub_mul(sum, b.M, std::uint32_t(std::nearbyint(frac)));  // 0 <= k <= count
    return sum;
}

void crt_to_double(const CrtBasis& b, const std::int8_t* y, std::size_t stride, int count, const int* exponent,
                   double* out) {
    isa_kernels().int8_residues->crt_row(b, y, stride, count, exponent, out);
}

}  // namespace amxblas::kernels

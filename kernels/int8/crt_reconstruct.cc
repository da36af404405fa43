#include "kernels/int8/crt_reconstruct.h"

#include <cmath>

namespace amxblas::kernels {

double round_to_double(__int128 x) {
    const bool neg = x < 0;
    u128 mag = neg ? u128(0) - u128(x) : u128(x);
    const std::uint64_t hi = std::uint64_t(mag >> 64);
    const int bits = hi ? 128 - __builtin_clzll(hi) : (mag ? 64 - __builtin_clzll(std::uint64_t(mag)) : 0);
    double r;
    if (bits <= 53) {
        r = double(std::uint64_t(mag));  // exact
    } else {
        const int shift = bits - 53;
        std::uint64_t keep = std::uint64_t(mag >> shift);  // the leading 53 bits
        const u128 rest = mag & ((u128(1) << shift) - 1), half = u128(1) << (shift - 1);
        if (rest > half || (rest == half && (keep & 1))) ++keep;  // may reach 2^53: still exact
        r = std::ldexp(double(keep), shift);
    }
    return neg ? -r : r;
}

__int128 crt_value(const CrtBasis& b, const std::int32_t* c, std::size_t stride) {
    u128 sum = 0;
    double frac = 0;
    for (int l = 0; l < b.count; ++l) {
        const int m = b.m[l];
        int r = int(c[l * stride] % m);
        r += r < 0 ? m : 0;
        const int y = int((long(r) * b.q[l]) % m);
        frac += y * b.inv_m[l];
        sum += u128(y) * b.w[l];  // modulo 2^128
    }
    const double k = std::nearbyint(frac);  // 0 <= k <= count
    sum -= u128(k) * b.M;
    return __int128(sum);
}

void crt_to_double(const CrtBasis& b, const std::int32_t* c, std::size_t stride, int count, double* out) {
    for (int e = 0; e < count; ++e) out[e] = round_to_double(crt_value(b, c + e, stride));
}

}  // namespace amxblas::kernels

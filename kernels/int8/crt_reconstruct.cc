#include "kernels/int8/crt_reconstruct.h"

#include <cmath>

namespace amxblas::kernels {

double round_to_double(const Wide& x) {
    const bool neg = x.negative();
    Wide mag = x;
    if (neg) {  // two's complement negation
        unsigned __int128 carry = 1;
        for (int i = 0; i < 3; ++i) {
            const unsigned __int128 t = (unsigned __int128)(~x.w[i]) + carry;
            mag.w[i] = std::uint64_t(t);
            carry = t >> 64;
        }
    }
    int top = -1;  // the highest set bit
    for (int i = 2; i >= 0 && top < 0; --i)
        if (mag.w[i]) top = 64 * i + 63 - __builtin_clzll(mag.w[i]);
    const auto bit = [&mag](int b) { return b >= 0 && (mag.w[b / 64] >> (b % 64) & 1); };
    double r;
    if (top < 53) {
        r = double(mag.w[0]);  // exact
    } else {
        const int shift = top - 52;  // keep bits top .. shift
        std::uint64_t keep = 0;
        for (int b = top; b >= shift; --b) keep = keep << 1 | std::uint64_t(bit(b));
        bool below = false;  // any set bit under the half
        for (int b = shift - 2; b >= 0 && !below; --b) below = bit(b);
        const bool half = bit(shift - 1);
        if (half && (below || (keep & 1))) ++keep;  // may reach 2^53: still exact
        r = std::ldexp(double(keep), shift);
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

}  // namespace amxblas::kernels

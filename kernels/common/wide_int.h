// 192-bit two's complement integers, just what the INT8 engine's reconstruction needs
// (crt_reconstruct.h): multiply-add by a small factor modulo 2^192, and one rounding to FP64.
// Up to 24 moduli, M < 2^185 and the results below 2^182 in magnitude fit with room to spare.
#pragma once

#include <cstdint>

namespace amxblas::kernels {

struct Wide {
    std::uint64_t w[3] = {0, 0, 0};  // little-endian limbs

    static Wide from(__int128 x) {
        Wide r;
        r.w[0] = std::uint64_t(x);
        r.w[1] = std::uint64_t(x >> 64);
        r.w[2] = x < 0 ? ~std::uint64_t(0) : 0;
        return r;
    }
    bool negative() const { return w[2] >> 63; }
    bool operator==(const Wide& o) const { return w[0] == o.w[0] && w[1] == o.w[1] && w[2] == o.w[2]; }
};

// acc += x * y modulo 2^192 (y < 2^32).
inline void add_mul(Wide& acc, const Wide& x, std::uint32_t y) {
    unsigned __int128 carry = 0;
    for (int i = 0; i < 3; ++i) {
        const unsigned __int128 t = (unsigned __int128)x.w[i] * y + acc.w[i] + carry;
        acc.w[i] = std::uint64_t(t);
        carry = t >> 64;
    }
}

// acc -= x * y modulo 2^192 (y < 2^32).
inline void sub_mul(Wide& acc, const Wide& x, std::uint32_t y) {
    Wide p;
    add_mul(p, x, y);
    unsigned __int128 borrow = 0;
    for (int i = 0; i < 3; ++i) {
        const unsigned __int128 t = (unsigned __int128)acc.w[i] - p.w[i] - borrow;
        acc.w[i] = std::uint64_t(t);
        borrow = (t >> 64) & 1;
    }
}

// x rounded to the nearest FP64, ties to even: one rounding.
double round_to_double(const Wide& x);

}  // namespace amxblas::kernels

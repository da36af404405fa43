// Powers of two as FP64 without a library call per value (std::ldexp is one).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace amxblas::kernels {

// 2^e, exactly (e >= -1074): from its bits in the normal range.
inline double pow2(int e) {
    if (e >= -1022 && e <= 1023) {
        const std::uint64_t bits = std::uint64_t(e + 1023) << 52;
        double p;
        std::memcpy(&p, &bits, sizeof p);
        return p;
    }
    return std::ldexp(1.0, e);
}

// std::ldexp(x, e), bit for bit: where 2^e is a normal number the product x 2^e is rounded
// once, correctly, as ldexp's result is; elsewhere ldexp itself.
inline double times_pow2(double x, int e) {
    return e >= -1022 && e <= 1023 ? x * pow2(e) : std::ldexp(x, e);
}

}  // namespace amxblas::kernels

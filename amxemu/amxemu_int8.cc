// AMX-INT8 dot-product arithmetic (see amxemu_int8.h).
#include "amxemu/amxemu_int8.h"

#include <cstring>

namespace amxemu {
namespace {

// One byte as the form reads it: sign- or zero-extended to 32 bits.
int32_t extend(uint8_t byte, bool is_signed) { return is_signed ? int32_t(int8_t(byte)) : int32_t(byte); }

}  // namespace

void int8_dot_tile(Int8Signs signs, int rows, int n_out, int k_quads, uint8_t (*dst)[64],
                   const uint8_t (*src1)[64], const uint8_t (*src2)[64]) {
    for (int m = 0; m < rows; ++m)
        for (int n = 0; n < n_out; ++n) {
            // Unsigned arithmetic: the INT32 accumulation wraps modulo 2^32 on the hardware,
            // which signed int overflow in C++ would not promise. A single product (at most
            // 255 * 255) and a quad's sum (at most 4 * 65025) fit in int32 exactly.
            uint32_t acc;
            std::memcpy(&acc, dst[m] + 4 * n, sizeof(acc));
            for (int k = 0; k < k_quads; ++k) {
                int32_t quad = 0;
                for (int j = 0; j < 4; ++j)
                    quad += extend(src1[m][4 * k + j], signs.src1_signed) *
                            extend(src2[k][4 * n + j], signs.src2_signed);
                acc += uint32_t(quad);
            }
            std::memcpy(dst[m] + 4 * n, &acc, sizeof(acc));
        }
}

}  // namespace amxemu

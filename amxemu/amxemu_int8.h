// The arithmetic of the AMX-INT8 dot products (TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD), apart from
// the trap handler: amxemu.cc decodes the instruction and checks the tiles (#UD), then calls
// this on the emulated tile data. Pure integer code, async-signal-safe.
#pragma once

#include <stdint.h>

namespace amxemu {

// Which operands' bytes are signed: the first letter of the form is src1's, the second src2's
// (TDPBSUD: signed src1 bytes times unsigned src2 bytes).
struct Int8Signs {
    bool src1_signed;
    bool src2_signed;
};

// The SDM's Operation for the four forms: for each of dst's `rows` rows and `n_out` dword
// columns, add to the INT32 in dst the 4 byte products of each of `k_quads` K quads (dword k
// of src1's row m times dword n of src2's row k, byte by byte). The sum wraps modulo 2^32, as
// the hardware's does (no saturation). Rows are 64 bytes; nothing outside the rows x n_out
// dwords of dst is read or written.
void int8_dot_tile(Int8Signs signs, int rows, int n_out, int k_quads, uint8_t (*dst)[64],
                   const uint8_t (*src1)[64], const uint8_t (*src2)[64]);

}  // namespace amxemu

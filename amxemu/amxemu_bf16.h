// The arithmetic of TDPBF16PS, apart from the trap handler: amxemu_decode.cc decodes the
// instruction and amxemu_tiles.cc checks the tiles (#UD), then calls this on their data. Async-signal-safe: no
// locks, no allocation.
#pragma once

#include <stdint.h>

namespace amxemu {

// The SDM's Operation: for each of dst's `rows` rows and `n_out` FP32 columns, two FP32 chains
// (the even and the odd bf16 of each of src1's `k_pairs` pairs times src2's) start at +0 and
// fused-multiply-add along K, then dst + (even + odd). DAZ on every input (bf16 and FP32
// dst), FTZ on every result with tininess after rounding, round to nearest even, under the
// default MXCSR (the handler sets it). Rows are 64 bytes; nothing outside the rows x n_out
// dwords of dst is read or written.
//
// Two paths with the same bits: the scalar one, which states the definition, and one on AVX2
// and FMA registers (8 columns at a time), taken where the CPU has them and no input is a NaN
// (whose payload the order of an FMA's operands could change). `vector` asks for the latter.
void bf16_dot_tile(int rows, int n_out, int k_pairs, uint8_t (*dst)[64], const uint8_t (*src1)[64],
                   const uint8_t (*src2)[64], bool vector);

// Whether this CPU runs the vector path (AVX2 and FMA).
bool bf16_vector_path_runs(void);

}  // namespace amxemu

// The tiles of each thread and what the emulated instructions do to them and to the program's
// memory: the checks the hardware makes (#UD, #GP, a page fault), each ending in a message that
// names the instruction and its tiles, then the SDM's Operation (the dot products' arithmetic in
// amxemu_bf16.cc and amxemu_int8.cc). Async-signal-safe: no malloc, no stdio, no locks.
#pragma once

#include "amxemu/amxemu_decode.h"

namespace amxemu {

// Runs `in` on the calling thread's tiles; `vector_bf16`: TDPBF16PS on its AVX2 path
// (amxemu_bf16.h).
void execute(const Insn& in, bool vector_bf16);

// Copies the calling thread's tile `tile` (0-7: 16 rows of 64 bytes) to out.
void tile_bytes(int tile, void* out);

}  // namespace amxemu

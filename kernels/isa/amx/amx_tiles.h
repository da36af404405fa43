// What the AMX micro-kernels share: one tile configuration, the tile roles in it, and the
// tile moves of a micro-tile. microkernel_amx.cc (TDPBF16PS) and microkernel_amx_int8.cc
// (TDPBSSD) run on the same tiles, because the packed blocks of kAmxGeometry and of
// kAmxInt8Geometry have the same bytes per row and per tile (microkernel.h):
//
//   TMM0, TMM1  A row halves: rows 0-15 and 16-31 of one K step, 16 x 64 B, stride 64 B
//               (BF16: 32 K values a row; INT8: 64)
//   TMM2, TMM3  B VNNI halves: output columns 0-15 and 16-31, 16 x 64 B, stride 64 B
//               (a row holds one K pair of the 16 columns for BF16, one K quad for INT8)
//   TMM4..TMM7  accumulator quadrants (rows 0-15, cols 0-15), (0-15, 16-31), (16-31, 0-15),
//               (16-31, 16-31), 16 x 16 four-byte values each (FP32 or INT32)
//
// So one configuration, all eight tiles 16 rows x 64 bytes, serves both products: a thread
// that runs both never reloads it. The tile numbers are literals in the functions below, as
// GCC's intrinsics require (they paste the number into the instruction text). Only files
// built with -mamx-tile include this header.
#pragma once

#include <immintrin.h>

#include <cstddef>

namespace amxblas::kernels::amx {

constexpr int kTileRows = 16;        // rows of every tile (palette 1's maximum)
constexpr int kTileColsBytes = 64;   // bytes of every tile row (palette 1's maximum)
constexpr int kStrideBytes = 64;     // bytes between packed rows of an A or a B block
constexpr int kHalfBytes = kTileRows * kStrideBytes;  // one A row half or one B group: 1 KiB
constexpr int kBlockBytes = 2 * kHalfBytes;            // one packed A or B block: 2 KiB

// GCC 12's AMX intrinsics under-declare their memory operands: _tile_loadd and _tile_stored
// claim no memory access, _tile_loadconfig only 8 of its 64 bytes. A compiler barrier before
// the first load and after the last store of each kernel keeps every buffer write on the
// right side of the tile instructions, whatever inlining or LTO does around these files.
inline void compiler_barrier() { asm volatile("" ::: "memory"); }

// The micro-kernels' thread_begin(): loads the configuration above unless this thread has it
// loaded already (lazy configuration, amx_tiles.cc says why). One STTILECFG per call, one
// LDTILECFG on a thread's first.
void configure_tiles();

// An A block (two row halves) into TMM0 and TMM1, a B block (two column groups) into TMM2
// and TMM3: 2 TILELOADD each.
inline void load_a(const void* a) {
    _tile_loadd(0, a, kStrideBytes);
    _tile_loadd(1, static_cast<const char*>(a) + kHalfBytes, kStrideBytes);
}

inline void load_b(const void* b) {
    _tile_loadd(2, b, kStrideBytes);
    _tile_loadd(3, static_cast<const char*>(b) + kHalfBytes, kStrideBytes);
}

// 4 TILEZERO.
inline void zero_acc() {
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
}

// The four accumulator quadrants to the 32 x 32 tile at c (row stride ldc values of 4 bytes,
// float or int32_t): 4 TILESTORED.
template <typename T>
inline void store_acc(T* c, int ldc) {
    static_assert(sizeof(T) == 4, "an accumulator row is 16 four-byte values");
    const long stride = long(ldc) * long(sizeof(T));
    const std::size_t down = std::size_t(kTileRows) * std::size_t(ldc);
    _tile_stored(4, c, stride);
    _tile_stored(5, c + 16, stride);
    _tile_stored(6, c + down, stride);
    _tile_stored(7, c + down + 16, stride);
}

}  // namespace amxblas::kernels::amx

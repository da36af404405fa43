// AMX-BF16 micro-kernel (TDPBF16PS) on the packed layouts of microkernel.h.
//
// Tile registers, fixed for the whole call (paper Figure 2):
//   TMM0, TMM1  A row halves: rows 0-15 and 16-31 of one K step, 16 x 64 B, stride 64 B
//   TMM2, TMM3  B VNNI halves: output columns 0-15 and 16-31, 16 x 64 B, stride 64 B
//   TMM4..TMM7  FP32 quadrants: (rows 0-15, cols 0-15), (0-15, 16-31), (16-31, 0-15),
//               (16-31, 16-31), 16 x 16 floats each
// The tile numbers are compile-time constants, as the intrinsics require. This is the only
// file built with -mamx-tile -mamx-bf16, and nothing here runs unless the call asked for the
// amx backend. Every tile instruction is counted (see the per-function totals), since under the
// trap-and-emulate harness each one costs microseconds.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {
namespace {

constexpr int kTmmCount = 8;
constexpr std::uint8_t kPalette1 = 1;
constexpr int kStrideBytes = kTile * sizeof(bf16_t);  // 64: one packed row
constexpr int kTileRows = 16;
constexpr int kTileColsBytes = 64;

// The 64-byte LDTILECFG operand (SDM Vol. 1, 18.2.2): palette, start_row, 14 reserved bytes,
// 16 x colsb (only 0..7 used), 16 x rows.
struct alignas(64) TileConfig {
    std::uint8_t palette_id = 0;
    std::uint8_t start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};

    // Palette 1 limits: 8 tiles of at most 16 rows x 64 bytes. Refuses anything else.
    bool set(int tmm, int nrows, int ncolsb) {
        if (tmm < 0 || tmm >= kTmmCount || nrows < 1 || nrows > kTileRows || ncolsb < 1 || ncolsb > kTileColsBytes)
            return false;
        rows[tmm] = std::uint8_t(nrows);
        colsb[tmm] = std::uint16_t(ncolsb);
        return true;
    }
};
static_assert(sizeof(TileConfig) == 64, "LDTILECFG reads exactly 64 bytes");

// GCC 12's AMX intrinsics under-declare their memory operands: _tile_loadd and _tile_stored
// claim no memory access, _tile_loadconfig only 8 of its 64 bytes. A compiler barrier before
// the first load and after the last store of each kernel keeps every buffer write on the
// right side of the tile instructions, whatever inlining or LTO does around this file.
inline void compiler_barrier() { asm volatile("" ::: "memory"); }

TileConfig micro_tile_config() {
    TileConfig cfg;
    cfg.palette_id = kPalette1;
    // Every tile is 16 rows x 64 bytes: 16x32 BF16 sources, 16x16 FP32 accumulators.
    for (int t = 0; t < kTmmCount; ++t) cfg.set(t, kTileRows, kTileColsBytes);
    return cfg;
}

// Built when the library is loaded, not at a thread's first call: a function-local static's
// guard caught in progress by fork() would hang the child (kernels/runtime/process_state.h).
const TileConfig kMicroTileConfig = micro_tile_config();

// The configuration is loaded once per thread, not once per call: the loaded one is read back
// (STTILECFG) and LDTILECFG runs only when it differs (a fresh thread reads all zeros; so does
// a thread whose tiles something else released or configured otherwise). This is oneDNN's
// habit ("lazy" tile configuration), and why thread_end() leaves the tiles configured: a
// TILERELEASE there would force the LDTILECFG again on the next call. Configured tiles do not
// keep a core out of deep idle states: Linux saves the thread's tile state and releases the
// registers itself before a Sapphire Rapids core enters C6 (fpu_idle_fpregs(), since 5.18).
void thread_begin() {
    const TileConfig& cfg = kMicroTileConfig;
    TileConfig loaded;
    compiler_barrier();
    _tile_storeconfig(&loaded);
    compiler_barrier();
    if (std::memcmp(&loaded, &cfg, sizeof cfg) != 0) _tile_loadconfig(&cfg);
    compiler_barrier();
}

void thread_end() {}

inline void load_a(const bf16_t* a) {
    _tile_loadd(0, a, kStrideBytes);
    _tile_loadd(1, a + kHalfElems, kStrideBytes);
}

inline void load_b(const bf16_t* b) {
    _tile_loadd(2, b, kStrideBytes);
    _tile_loadd(3, b + kHalfElems, kStrideBytes);
}

inline void dots() {
    _tile_dpbf16ps(4, 0, 2);
    _tile_dpbf16ps(5, 0, 3);
    _tile_dpbf16ps(6, 1, 2);
    _tile_dpbf16ps(7, 1, 3);
}

inline void zero_acc() {
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
}

inline void store_acc(float* c, int ldc) {
    const long stride = long(ldc) * long(sizeof(float));
    _tile_stored(4, c, stride);
    _tile_stored(5, c + 16, stride);
    _tile_stored(6, c + 16 * ldc, stride);
    _tile_stored(7, c + 16 * ldc + 16, stride);
}

// Per K step: 14 TILELOADD, 24 TDPBF16PS; per call 4 TILEZERO + 4 TILESTORED.
void fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc) {
    compiler_barrier();
    zero_acc();
    for (int s = 0; s < ksteps; ++s) {
        const std::size_t o = std::size_t(s) * kStepElems;
        load_a(p.a[1] + o); load_b(p.b[1] + o); dots();  // A1B1
        load_b(p.b[0] + o); dots();                      // A1B0
        load_a(p.a[2] + o); dots();                      // A2B0
        load_a(p.a[0] + o); dots();                      // A0B0
        load_b(p.b[1] + o); dots();                      // A0B1
        load_b(p.b[2] + o); dots();                      // A0B2
    }
    store_acc(c, ldc);
    compiler_barrier();
}

// Per K step: 4 TILELOADD, 4 TDPBF16PS; per call 4 TILEZERO + 4 TILESTORED.
void product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc) {
    compiler_barrier();
    zero_acc();
    for (int s = 0; s < ksteps; ++s) {
        const std::size_t o = std::size_t(s) * kStepElems;
        load_a(a + o);
        load_b(b + o);
        dots();
    }
    store_acc(c, ldc);
    compiler_barrier();
}

}  // namespace

// AMX overrides every entry of the reference table.
MicroKernels amx_microkernels() { return MicroKernels{kAmxGeometry, thread_begin, thread_end, fp32_chain, product}; }

}  // namespace amxblas::kernels

// The AMX micro-kernels' one tile configuration and its lazy loading (amx_tiles.h). Built
// with -mamx-tile only: it configures tiles and multiplies nothing.
#include "kernels/isa/amx/amx_tiles.h"

#include <cstdint>
#include <cstring>

namespace amxblas::kernels::amx {
namespace {

constexpr int kTmmCount = 8;
constexpr std::uint8_t kPalette1 = 1;

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

TileConfig micro_tile_config() {
    TileConfig cfg;
    cfg.palette_id = kPalette1;
    // Every tile is 16 rows x 64 bytes: BF16 or INT8 sources, FP32 or INT32 accumulators.
    for (int t = 0; t < kTmmCount; ++t) cfg.set(t, kTileRows, kTileColsBytes);
    return cfg;
}

// Built when the library is loaded, not at a thread's first call: a function-local static's
// guard caught in progress by fork() would hang the child (kernels/driver/process_state.h).
const TileConfig kMicroTileConfig = micro_tile_config();

}  // namespace

// The configuration is loaded once per thread, not once per call: the loaded one is read back
// (STTILECFG) and LDTILECFG runs only when it differs (a fresh thread reads all zeros; so does
// a thread whose tiles something else released or configured otherwise). This is oneDNN's
// habit ("lazy" tile configuration), and why the kernels' thread_end() leaves the tiles
// configured: a TILERELEASE there would force the LDTILECFG again on the next call. Configured
// tiles do not keep a core out of deep idle states: Linux saves the thread's tile state and
// releases the registers itself before a Sapphire Rapids core enters C6 (fpu_idle_fpregs(),
// since 5.18).
void configure_tiles() {
    const TileConfig& cfg = kMicroTileConfig;
    TileConfig loaded;
    compiler_barrier();
    _tile_storeconfig(&loaded);
    compiler_barrier();
    if (std::memcmp(&loaded, &cfg, sizeof cfg) != 0) _tile_loadconfig(&cfg);
    compiler_barrier();
}

}  // namespace amxblas::kernels::amx

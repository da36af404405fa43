// AMX-INT8 micro-kernel (TDPBSSD) on the packed INT8 layouts of microkernel.h: the product of
// the FP64 INT8 engine (kAmxInt8Geometry, 32 x 32 INT32 tile, 64 K values a block).
//
// The same tiles as the BF16 kernel, under the same configuration (amx_tiles.h): TMM0, TMM1
// the A row halves (16 rows x 64 signed bytes), TMM2, TMM3 the B column groups (16 K quads x
// 16 columns x 4 bytes), TMM4..TMM7 the INT32 quadrants. TDPBSSD reads both operands as
// signed bytes, as the contract's A and B are, and its INT32 sums are exact at the panel
// depths the caller keeps (microkernel.h). The only file built with -mamx-tile -mamx-int8.
#include "kernels/isa/amx/microkernel_amx_int8.h"

#include <immintrin.h>

#include <cstddef>

#include "kernels/isa/amx/amx_tiles.h"
#include "kernels/isa/microkernel.h"

namespace amxblas::kernels::amx {
namespace {

constexpr TileGeometry g = kAmxInt8Geometry;
// The geometry is the tiles': an A block is two 16-row halves of 64-byte rows (mr = 32 rows,
// kstep = 64 K bytes); a B block is two groups (nr = 32, nr_vnni = 16 columns of 4 bytes)
// of kstep / 4 = 16 K-quad rows.
static_assert(g.mr == 2 * kTileRows && g.kstep == kTileColsBytes, "A block: two 16 x 64-byte tiles");
static_assert(g.nr == 2 * g.nr_vnni && g.nr_vnni * 4 == kTileColsBytes && g.kstep / 4 == kTileRows,
              "B block: two tiles of 16 K quads x 16 columns");
static_assert(g.mr * g.kstep == kBlockBytes && g.kstep * g.nr == kBlockBytes, "2 KiB blocks");

inline void dots_s8() {
    _tile_dpbssd(4, 0, 2);
    _tile_dpbssd(5, 0, 3);
    _tile_dpbssd(6, 1, 2);
    _tile_dpbssd(7, 1, 3);
}

}  // namespace

// Per K step (64 K values): 4 TILELOADD, 4 TDPBSSD; per call 4 TILEZERO + 4 TILESTORED.
void product_s8(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc) {
    compiler_barrier();
    zero_acc();
    for (int s = 0; s < ksteps; ++s) {
        const std::size_t o = std::size_t(s) * kBlockBytes;
        load_a(a + o);
        load_b(b + o);
        dots_s8();
    }
    store_acc(c, ldc);
    compiler_barrier();
}

}  // namespace amxblas::kernels::amx

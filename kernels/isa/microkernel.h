// The micro-kernel contract: one mr x nr FP32 output tile over one packed BK panel.
//
// Every backend (reference, AVX-512 BF16, AMX-BF16) implements this contract and nothing else;
// the driver (kernels/bf16/macro_kernel.h) only loops over blocks, panels and tiles and calls through a
// MicroKernels table. Everything instruction-set specific lives behind these pointers.
//
// Geometry. Each table carries its own TileGeometry (mr, nr, kstep, and nr_vnni, the columns
// of one VNNI row of a B block), as BLIS keeps MR and NR per kernel: the packer lays the
// operands out for it, the workspace is sized by it and the macro-kernel walks the BM x BN
// block in mr x nr tiles and the BK panel in K steps of kstep. All production sets use
// kAmxGeometry (32, 32, 32, 16: AMX's tiles); the packer's fast paths (pack_gather_avx512.cc,
// split_avx512.cc, kernels/pack/pack_fp64.cc) are written for it, and every other geometry
// takes the portable packer (pack_generic.cc). A set with another geometry is one file (its
// kernels and table) and, for a backend, one row of backends.def and its source line in
// kernels/CMakeLists.txt; tests/kernels/bf16/kernels_geometry_test.cc runs two (the reference kernel
// at 16 x 8 x 16 and 64 x 32 x 8) that are registered nowhere else.
//
// Packed operands (built by kernels/pack/, one buffer per BF16 slice). The unit is a "K step":
// kstep values of the reduction dimension. One K step of one micro-panel is one block; a BK
// panel is `ksteps` such blocks back to back. For geometry (mr, nr, kstep, g = nr_vnni):
//
//   A block: mr rows of op(A) x kstep K values, row-major: A(r, kk) at r * kstep + kk.
//   B block: kstep K values x nr columns of op(B) in VNNI pairs, as nr / g groups of g
//            columns; group h holds kstep / 2 rows of g K pairs:
//            B(kk, c) at (c / g) * (kstep * g) + (kk / 2) * (2 * g) + (c % g) * 2 + kk % 2.
//
// So kstep is even, g divides nr, BK (kBlockK) is a multiple of kstep, BM and BN are multiples
// of mr and nr, and nr is even (a complex GEMM's columns 2j, 2j + 1 share a tile: complex_gemm.cc).
// geometry_ok() checks it. For kAmxGeometry (1024 values, 2 KiB per block):
//
//   A block (32 rows of op(A) x 32 K), row-major, 64-byte rows: one AMX tile per row half.
//
//        k=0 1 2 ...        31
//   row 0  [a a a ........... a]   <- 64 bytes       -+
//   row 1  [a a a ........... a]                      |  TMM0 (rows 0-15), stride 64 B
//   ...                                              -+
//   row 16 [a a a ........... a]   <- +1024 bytes    -+
//   ...                                               |  TMM1 (rows 16-31)
//   row 31 [a a a ........... a]                     -+
//
//   B block (32 K x 32 columns of op(B)), VNNI: two halves (groups) of 16 output columns each,
//   half h = 0 (columns 0-15), h = 1 (columns 16-31, at +512 values = +1024 bytes).
//   Within a half, row p (p = 0..15, 64 bytes) holds the K pairs 2p, 2p+1 of all 16 columns:
//
//   row p  [B(2p,0) B(2p+1,0) | B(2p,1) B(2p+1,1) | ... | B(2p,15) B(2p+1,15)]
//
//   so half 0 is TMM2 and half 1 is TMM3, each 16 rows x 64 B, stride 64 B.
//
// Output: c points at an mr x nr FP32 tile with row stride ldc floats (row-major: C(r, n) is
// c[r * ldc + n]). The kernels OVERWRITE c with the panel result (accumulators start at zero);
// c is never read, so it may hold anything, NaN included. Adding panel results together is
// the driver's job (FP32 block accumulator for sgemm, FP64 widening for dgemm).
//
// Arithmetic: each dot step is the SDM's TDPBF16PS/VDPBF16PS step: BF16 inputs that are
// denormal count as zero, products are exact, every accumulation rounds to nearest even in
// FP32 and denormal results flush to zero. Accumulation order per output element: K steps in
// order; in fp32_chain, within a K step the products in the operand-reuse order of Eq. (19).
// So the FP32 bits depend on kstep (where the K steps' partial sums meet); the FP64 bits do not
// (every panel sum is exact, kernels/bf16/macro_kernel.h), whatever the geometry.
// The order inside one pair may differ between instruction sets; for dgemm it cannot matter,
// since every panel sum there is exact (see kernels/bf16/macro_kernel.h).
//
// Threads: thread_begin() runs once per thread per call before its first tile, thread_end()
// after its last (AMX loads the tile configuration there when the thread's loaded one differs,
// and keeps it for the next call; others do nothing).
#pragma once

#include <cstdint>

#include "kernels/common/bf16.h"

namespace amxblas::kernels {

struct TileGeometry {
    int mr;       // rows of op(A) per micro-tile (and per A block)
    int nr;       // columns of op(B) per micro-tile (and per B block)
    int kstep;    // K values per packed block (even: VNNI pairs)
    int nr_vnni;  // columns of one VNNI row of a B block (divides nr)
    int a_block_elems() const { return mr * kstep; }
    int b_block_elems() const { return kstep * nr; }
    bool operator==(const TileGeometry& o) const {
        return mr == o.mr && nr == o.nr && kstep == o.kstep && nr_vnni == o.nr_vnni;
    }
    bool operator!=(const TileGeometry& o) const { return !(*this == o); }
};

constexpr int kBlockM = 256, kBlockN = 256, kBlockK = 256;  // BM, BN, BK (Eq. 18)

// The geometry of AMX's tiles (TM = TN = K step = 32; B rows of 16 column pairs, 64 bytes),
// which every production set uses. The constants below are its numbers, for the code written
// for it alone (the fast packers, the AMX and AVX-512 kernels, the reconstruction tables).
constexpr TileGeometry kAmxGeometry{32, 32, 32, 16};
constexpr int kTile = 32;                      // kAmxGeometry's mr = nr = kstep
constexpr int kStepElems = kTile * kTile;      // BF16 values in one of its packed blocks
constexpr int kHalfElems = kStepElems / 2;     // one B group (a 16-row AMX source tile)

// What the packer, the workspace and the macro-kernel need of a geometry (see above).
constexpr bool geometry_ok(const TileGeometry& g) {
    return g.mr > 0 && g.nr > 0 && g.kstep > 0 && g.nr_vnni > 0 && g.kstep % 2 == 0 && g.nr % 2 == 0 &&
           g.nr % g.nr_vnni == 0 && kBlockM % g.mr == 0 && kBlockN % g.nr == 0 && kBlockK % g.kstep == 0;
}
static_assert(geometry_ok(kAmxGeometry), "the production geometry");

// The three slices of each operand for the fused FP32 chain; a[s] and b[s] each point at
// `ksteps` consecutive packed blocks of slice s for this micro-tile and BK panel.
struct Fp32Panels {
    const bf16_t* a[3];
    const bf16_t* b[3];
};

// INT8 products, for the FP64 INT8 engine (kernels/int8/). The same contract on signed bytes:
// c := A * B over the panel, one mr x nr INT32 tile, overwritten (row stride ldc int32s). The
// geometry's kstep is the K values of one block and nr_vnni the columns of one B row, which
// holds 4 consecutive K values of each (VNNI quads, as TDPBSSD and VPDPBUSD read them):
//
//   A block: mr rows of op(A) x kstep K values, row-major: A(r, kk) at r * kstep + kk.
//   B block: B(kk, c) at (c / g) * (kstep * g) + (kk / 4) * (4 * g) + (c % g) * 4 + kk % 4.
//
// Arithmetic: exact. Every product of two values in [-128, 127] is exact and so is every
// INT32 sum, because the caller keeps a panel at most kInt8MaxPanelDepth deep (the VNNI
// kernel's unsigned offset, a + 128, must not overflow either: 255 * 128 * 2^16 < 2^31).
// So every backend returns the same integers, in any order of summation.
//
// For kAmxInt8Geometry (2 KiB per block, as for BF16): an A block is two AMX tiles of 16 rows x
// 64 bytes, a B block two of 16 rows (K quads) x 16 columns x 4 bytes; TDPBSSD multiplies them.
constexpr TileGeometry kAmxInt8Geometry{32, 32, 64, 16};
constexpr int kInt8MaxPanelDepth = 1 << 16;
using Int8Product = void (*)(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc);

struct MicroKernels {
    TileGeometry geometry;  // the tile and packed block shapes this set works on
    void (*thread_begin)();
    void (*thread_end)();
    // c := A0B0 + A0B1 + A1B0 + A0B2 + A1B1 + A2B0 over the panel, issued per K step in the
    // order A1B1, A1B0, A2B0, A0B0, A0B1, A0B2 into one set of FP32 accumulators.
    void (*fp32_chain)(int ksteps, const Fp32Panels& p, float* c, int ldc);
    // c := A * B over the panel, one component product.
    void (*product)(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc);
    // The INT8 engine's product and its geometry (see above); microkernels_for() gives a set
    // that has none the reference one.
    TileGeometry int8_geometry = kAmxInt8Geometry;
    Int8Product product_s8 = nullptr;
};

// Each backend's table, declared from its row of kernels/common/backends.def: starts from the
// reference entries, then overrides the ones it has. A backend's function exists only when its
// file was built (its `built` macro, set by kernels/CMakeLists.txt); backend.cc names it only
// then.
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) MicroKernels microkernels();
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND

// The reference entries (kAmxGeometry), exported for the others to fall back on and for tests;
// the reference kernel for any geometry is in microkernel_reference.h.
void reference_fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc);
void reference_product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc);
void reference_product_s8(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc);

}  // namespace amxblas::kernels

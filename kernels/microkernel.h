// The micro-kernel contract: one 32x32 FP32 output tile over one packed BK panel.
//
// Every backend (reference, AVX-512 BF16, AMX-BF16) implements this contract and nothing else;
// the driver (driver.cc) only loops over blocks, panels and tiles and calls through a
// MicroKernels table. Everything instruction-set specific lives behind these pointers.
//
// Packed operands (built by pack.cc, one buffer per BF16 slice). The unit is a "K step":
// 32 values of the reduction dimension. One K step of one micro-panel is a 2 KiB block of
// 1024 BF16 values (kStepElems); a BK panel is `ksteps` such blocks back to back.
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
//   B block (32 K x 32 columns of op(B)), VNNI: two halves of 16 output columns each,
//   half h = 0 (columns 0-15), h = 1 (columns 16-31, at +512 values = +1024 bytes).
//   Within a half, row p (p = 0..15, 64 bytes) holds the K pairs 2p, 2p+1 of all 16 columns:
//
//   row p  [B(2p,0) B(2p+1,0) | B(2p,1) B(2p+1,1) | ... | B(2p,15) B(2p+1,15)]
//
//   so half 0 is TMM2 and half 1 is TMM3, each 16 rows x 64 B, stride 64 B.
//
// Output: c points at a 32x32 FP32 tile with row stride ldc floats (row-major: C(r, n) is
// c[r * ldc + n]). The kernels OVERWRITE c with the panel result (accumulators start at zero);
// c is never read, so it may hold anything, NaN included. Adding panel results together is
// the driver's job (FP32 block accumulator for sgemm, FP64 widening for dgemm).
//
// Arithmetic: each dot step is the SDM's TDPBF16PS/VDPBF16PS step: BF16 inputs that are
// denormal count as zero, products are exact, every accumulation rounds to nearest even in
// FP32 and denormal results flush to zero. Accumulation order per output element: K steps in
// order; in fp32_chain, within a K step the products in the operand-reuse order of Eq. (19).
// The order inside one pair may differ between instruction sets; for dgemm it cannot matter,
// since every panel sum there is exact (see driver.cc).
//
// Threads: thread_begin() runs once per thread per call before its first tile, thread_end()
// after its last (AMX loads the tile configuration there when the thread's loaded one differs,
// and keeps it for the next call; others do nothing).
#pragma once

#include "kernels/bf16.h"

namespace amxblas::kernels {

constexpr int kTile = 32;                      // TM = TN = K step = 32
constexpr int kStepElems = kTile * kTile;      // BF16 values in one packed block
constexpr int kHalfElems = kStepElems / 2;     // one 16-row AMX source tile
constexpr int kBlockM = 256, kBlockN = 256, kBlockK = 256;  // BM, BN, BK (Eq. 18)

// The three slices of each operand for the fused FP32 chain; a[s] and b[s] each point at
// `ksteps` consecutive packed blocks of slice s for this micro-tile and BK panel.
struct Fp32Panels {
    const bf16_t* a[3];
    const bf16_t* b[3];
};

struct MicroKernels {
    void (*thread_begin)();
    void (*thread_end)();
    // c := A0B0 + A0B1 + A1B0 + A0B2 + A1B1 + A2B0 over the panel, issued per K step in the
    // order A1B1, A1B0, A2B0, A0B0, A0B1, A0B2 into one set of FP32 accumulators.
    void (*fp32_chain)(int ksteps, const Fp32Panels& p, float* c, int ldc);
    // c := A * B over the panel, one component product.
    void (*product)(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc);
};

// Each backend's table: starts from the reference entries, then overrides the ones it has.
// avx512_microkernels()/amx_microkernels() exist only when their file was built
// (AMXBLAS_BUILT_AVX512 / AMXBLAS_BUILT_AMX, set by kernels/CMakeLists.txt).
MicroKernels reference_microkernels();
MicroKernels avx512_microkernels();
MicroKernels amx_microkernels();

// The reference entries, exported for the others to fall back on and for tests.
void reference_fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc);
void reference_product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc);

}  // namespace amxblas::kernels

// AMX-BF16 micro-kernel (TDPBF16PS) on the packed layouts of microkernel.h, and the amx
// backend's table (which takes its INT8 product from microkernel_amx_int8.cc where built).
//
// Tile registers, fixed for the whole call (paper Figure 2; amx_tiles.h): TMM0, TMM1 the A
// row halves, TMM2, TMM3 the B VNNI halves, TMM4..TMM7 the FP32 quadrants. This file is built
// with -mamx-tile -mamx-bf16, and nothing here runs unless the call asked for the amx
// backend. Every tile instruction is counted (see the per-function totals), since under the
// trap-and-emulate harness each one costs microseconds.
#include <immintrin.h>

#include <cstddef>

#include "kernels/isa/amx/amx_tiles.h"
#include "kernels/isa/microkernel.h"
#if AMXBLAS_BUILT_AMX_INT8
#include "kernels/isa/amx/microkernel_amx_int8.h"
#endif

namespace amxblas::kernels {
namespace {

using amx::compiler_barrier;
using amx::load_a;
using amx::load_b;
using amx::store_acc;
using amx::zero_acc;

static_assert(kStepElems * sizeof(bf16_t) == amx::kBlockBytes && kHalfElems * sizeof(bf16_t) == amx::kHalfBytes,
              "a BF16 block of kAmxGeometry is two 16 x 64-byte tiles");

void thread_end() {}

inline void dots() {
    _tile_dpbf16ps(4, 0, 2);
    _tile_dpbf16ps(5, 0, 3);
    _tile_dpbf16ps(6, 1, 2);
    _tile_dpbf16ps(7, 1, 3);
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

// AMX overrides every entry of the reference table; the INT8 product too where the compiler
// knows AMX-INT8 (else microkernels_for() gives the reference one).
MicroKernels amx_microkernels() {
    MicroKernels k{kAmxGeometry, amx::configure_tiles, thread_end, fp32_chain, product};
#if AMXBLAS_BUILT_AMX_INT8
    k.int8_geometry = kAmxInt8Geometry;
    k.product_s8 = amx::product_s8;
#endif
    return k;
}

}  // namespace amxblas::kernels

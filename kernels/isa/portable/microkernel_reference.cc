// The reference backend's micro-kernel table: the portable kernel of microkernel_reference.h
// at kAmxGeometry. Built with -ffp-contract=off (the header says why).
//
// In a sanitizer build (kernels/CMakeLists.txt) this file alone is compiled without
// instrumentation: checked access by access, the kernel's arithmetic on its local arrays was
// 91% of the time of a netlib tester's run in the sanitizer step (perf, xzcblat3 with FP64
// auto), and that step took over 18 minutes on a machine without AVX-512 BF16, where every
// routed test runs this kernel. What instrumentation is for here, that the driver
// hands it blocks and a tile that exist, is checked instead whole at each call (ASan's
// interface): every byte of the packed panels it reads and of the C tile it writes.
#include "kernels/isa/portable/microkernel_reference.h"

#if AMXBLAS_CHECK_KERNEL_MEMORY
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

#include <cstdio>
#include <cstdlib>
#endif

namespace amxblas::kernels {
namespace {

using Reference = reference_kernel::Kernel<kAmxGeometry.mr, kAmxGeometry.nr, kAmxGeometry.kstep, kAmxGeometry.nr_vnni>;

#if AMXBLAS_CHECK_KERNEL_MEMORY
// Aborts, as an ASan finding does, unless all of [p, p + bytes) is addressable.
void require_addressable(const void* p, std::size_t bytes, const char* what) {
    if (void* bad = __asan_region_is_poisoned(const_cast<void*>(p), bytes)) {
        std::fprintf(stderr, "amxblas reference micro-kernel: %s [%p, +%zu) is not addressable at %p\n", what, p,
                     bytes, bad);
        __sanitizer_print_stack_trace();
        std::abort();
    }
}
void require_panels(int ksteps, const bf16_t* a, const bf16_t* b) {
    require_addressable(a, std::size_t(ksteps) * Reference::kA * sizeof(bf16_t), "A panel");
    require_addressable(b, std::size_t(ksteps) * Reference::kB * sizeof(bf16_t), "B panel");
}
void require_tile(const float* c, int ldc) {
    for (int r = 0; r < kAmxGeometry.mr; ++r)
        require_addressable(c + std::size_t(r) * ldc, kAmxGeometry.nr * sizeof(float), "C tile row");
}
#else
void require_panels(int, const bf16_t*, const bf16_t*) {}
void require_tile(const float*, int) {}
#endif

}  // namespace

void reference_fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc) {
    for (int s = 0; s < 3; ++s) require_panels(ksteps, p.a[s], p.b[s]);
    require_tile(c, ldc);
    Reference::fp32_chain(ksteps, p, c, ldc);
}

void reference_product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc) {
    require_panels(ksteps, a, b);
    require_tile(c, ldc);
    Reference::product(ksteps, a, b, c, ldc);
}

// Exact INT32 dot products; any order gives the same integers. Each K step's B block is first
// spread into rows of 16-bit values (bt[kk][c] = B(kk, c)), so that the inner loop runs over
// 32 contiguous columns and the compiler vectorizes it with 16-bit multiplies into 32-bit sums
// on any x86-64 (SSE2's PMADDWD / PMULLW), which made the kernel several times faster than
// reading the VNNI quads in place.
void reference_product_s8(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc) {
    constexpr TileGeometry g = kAmxInt8Geometry;
    constexpr int kA = g.mr * g.kstep, kB = g.kstep * g.nr;
#if AMXBLAS_CHECK_KERNEL_MEMORY
    require_addressable(a, std::size_t(ksteps) * kA, "A panel");
    require_addressable(b, std::size_t(ksteps) * kB, "B panel");
    for (int r = 0; r < g.mr; ++r) require_addressable(c + std::size_t(r) * ldc, g.nr * sizeof(std::int32_t), "C tile row");
#endif
    alignas(64) std::int32_t acc[g.mr][g.nr] = {};
    alignas(64) std::int16_t bt[g.kstep][g.nr];
    for (int s = 0; s < ksteps; ++s) {
        const std::int8_t* as = a + std::size_t(s) * kA;
        const std::int8_t* bs = b + std::size_t(s) * kB;
        for (int kk = 0; kk < g.kstep; ++kk)
            for (int cc = 0; cc < g.nr; ++cc)
                bt[kk][cc] = bs[(cc / g.nr_vnni) * (g.kstep * g.nr_vnni) + (kk / 4) * (4 * g.nr_vnni) +
                                (cc % g.nr_vnni) * 4 + kk % 4];
        for (int r = 0; r < g.mr; ++r)
            for (int kk = 0; kk < g.kstep; ++kk) {
                const std::int16_t x = as[r * g.kstep + kk];
                for (int cc = 0; cc < g.nr; ++cc) acc[r][cc] += std::int32_t(x * bt[kk][cc]);
            }
    }
    for (int r = 0; r < g.mr; ++r) std::memcpy(c + std::size_t(r) * ldc, acc[r], sizeof acc[r]);
}

// The template's table with the entries above, which check their memory in sanitizer builds.
MicroKernels reference_microkernels() {
    MicroKernels k = Reference::table();
    k.fp32_chain = reference_fp32_chain;
    k.product = reference_product;
    k.int8_geometry = kAmxInt8Geometry;
    k.product_s8 = reference_product_s8;
    return k;
}

}  // namespace amxblas::kernels

#include "bench/no_arith_kernels.h"

#include <algorithm>
#include <cstdint>

#include "kernels/isa/backend.h"

namespace amxblas::bench {
namespace {

void no_arith_product(int ksteps, const kernels::bf16_t*, const kernels::bf16_t*, float* c, int ldc) {
    const float v = float(ksteps) * kernels::kAmxGeometry.kstep * 0.25f;
    for (int r = 0; r < kernels::kAmxGeometry.mr; ++r) std::fill_n(c + std::size_t(r) * ldc, kernels::kAmxGeometry.nr, v);
}

void no_arith_product_s8(int ksteps, const std::int8_t*, const std::int8_t*, std::int32_t* c, int ldc) {
    const std::int32_t v = ksteps * kernels::kAmxInt8Geometry.kstep * 4032;  // below 2^31 / 4 for a 2048-deep panel
    for (int r = 0; r < kernels::kAmxInt8Geometry.mr; ++r)
        std::fill_n(c + std::size_t(r) * ldc, kernels::kAmxInt8Geometry.nr, v);
}

}  // namespace

const kernels::MicroKernels& no_arith_kernels() {
    static const kernels::MicroKernels mk = [] {
        kernels::MicroKernels k = kernels::microkernels_for(kernels::Backend::reference);
        k.product = no_arith_product;
        k.product_s8 = no_arith_product_s8;
        return k;
    }();
    return mk;
}

}  // namespace amxblas::bench

// Portable reconstruction (the definition; reconstruct_avx512.cc computes the same bits).
#include "kernels/reconstruct.h"

#include "kernels/cpu_features.h"
#include "kernels/microkernel.h"

namespace amxblas::kernels {
namespace {

void add_fp32_portable(const float* tile, float* acc, int ldacc) {
    for (int r = 0; r < kTile; ++r)
        for (int c = 0; c < kTile; ++c) acc[r * ldacc + c] += tile[r * kTile + c];
}

void widen_add_portable(const float* tiles, const double* scales, int count, double* acc, int ldacc) {
    // One tile at a time over the whole tile: each element still takes the tiles in order.
    for (int q = 0; q < count; ++q) {
        const float* t = tiles + std::size_t(q) * kStepElems;
        const double s = scales[q];
        for (int r = 0; r < kTile; ++r)
            for (int c = 0; c < kTile; ++c) acc[r * ldacc + c] += static_cast<double>(t[r * kTile + c]) * s;
    }
}

}  // namespace

const ReconstructKernels& reconstruct_kernels_portable() {
    static const ReconstructKernels k{add_fp32_portable, widen_add_portable};
    return k;
}

const ReconstructKernels& reconstruct_kernels() {
    static const ReconstructKernels& k =
        cpu_has_avx512_split() ? reconstruct_kernels_avx512() : reconstruct_kernels_portable();
    return k;
}

}  // namespace amxblas::kernels

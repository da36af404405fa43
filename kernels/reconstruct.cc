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

void widen_add_portable(const float* tiles, int count, double* acc, int ldacc) {
    for (int r = 0; r < kTile; ++r) {
        double row[kTile];
        for (int c = 0; c < kTile; ++c) row[c] = acc[r * ldacc + c];
        for (int q = 0; q < count; ++q) {
            const float* t = tiles + std::size_t(q) * kStepElems + r * kTile;
            for (int c = 0; c < kTile; ++c) row[c] += static_cast<double>(t[c]);
        }
        for (int c = 0; c < kTile; ++c) acc[r * ldacc + c] = row[c];
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

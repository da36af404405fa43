// Portable reconstruction (the definition; every instruction set computes the same bits).
#include "kernels/isa/reconstruct.h"

#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {
namespace {

// The definitions, for any tile shape; inlined so that the 32x32 table's loops keep their
// constant bounds.
inline void add_fp32_any(const float* tile, int rows, int cols, float* acc, int ldacc) {
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) acc[r * ldacc + c] += tile[r * cols + c];
}

inline void widen_add_any(const float* tiles, int rows, int cols, const double* scales, int count, double* acc, int ldacc) {
    // One tile at a time over the whole tile: each element still takes the tiles in order.
    for (int q = 0; q < count; ++q) {
        const float* t = tiles + std::size_t(q) * rows * cols;
        const double s = scales[q];
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) acc[r * ldacc + c] += static_cast<double>(t[r * cols + c]) * s;
    }
}

void add_fp32_portable(const float* tile, float* acc, int ldacc) { add_fp32_any(tile, kTile, kTile, acc, ldacc); }

void widen_add_portable(const float* tiles, const double* scales, int count, double* acc, int ldacc) {
    widen_add_any(tiles, kTile, kTile, scales, count, acc, ldacc);
}

}  // namespace

void add_fp32_tile(const float* tile, int rows, int cols, float* acc, int ldacc) { add_fp32_any(tile, rows, cols, acc, ldacc); }

void widen_add_tile(const float* tiles, int rows, int cols, const double* scales, int count, double* acc, int ldacc) {
    widen_add_any(tiles, rows, cols, scales, count, acc, ldacc);
}

void write_fp64_definition(const double* acc, int ldacc, int rows, int cols, double alpha, double beta, double* c,
                           std::size_t ldc) {
    for (int j = 0; j < cols; ++j) {
        double* col = c + std::size_t(j) * ldc;
        if (beta == 0) {
            for (int i = 0; i < rows; ++i) col[i] = alpha * acc[i * ldacc + j];
        } else {
            for (int i = 0; i < rows; ++i) col[i] = alpha * acc[i * ldacc + j] + beta * col[i];
        }
    }
}

const ReconstructKernels& reconstruct_kernels_portable() {
    static const ReconstructKernels k{add_fp32_portable, widen_add_portable, write_fp64_definition};
    return k;
}

}  // namespace amxblas::kernels

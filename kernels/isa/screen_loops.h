// The sample screen's loops over a sample's scaled operands (kernels/engine/scaled_sample.cc,
// kernels/bf16/bf16_screen.cc; docs/fp64-certificate.md, Section 12). One source (kernels/isa/sample_screen_loops.inc),
// built once per instruction set with the vector-loop flags (no FMA contraction): each value is
// the screen's expression, rounded per IEEE operation whatever the vector width, and each sum
// runs in index order, so every build gives the same bits (kernels_screen_loops_test). The
// functions have internal linkage, a copy per build.
#pragma once

#include <cstddef>

namespace amxblas::kernels::detail {

struct ScreenLoops {
    // One slice of the BF16 split over `count` values: work[q] -= fl(fl(work[q] + sigma) -
    // sigma) (split.h's Z, exact); returns the largest |work[q]| after it.
    double (*slice)(double* work, std::size_t count, double sigma);
    // out[i + j ldo] = sum over l < k of a[i + l lda] y[l + j ldy] (i < m, j < n), each sum in
    // index order, one rounding per product and per addition.
    void (*upper)(const double* a, int lda, const double* y, int ldy, int m, int n, int k, double* out, int ldo);
};

const ScreenLoops& screen_loops_portable();
const ScreenLoops& screen_loops_avx2();
const ScreenLoops& screen_loops_avx512();

}  // namespace amxblas::kernels::detail

// Reconstruction: adding the FP32 panel results of the micro-kernels into the block
// accumulator (FP32 for sgemm, FP64 for dgemm). It is the part of the FP64 path that AMX does
// not do (paper Figure 5): every retained product is stored, widened and added outside the tile
// unit, so it is timed as its own phase (PhaseTimes::reconstruct_s) and vectorised.
//
// dgemm hands over up to kWidenBatch product tiles of one micro-tile and panel at once, each
// with its factor 2^(vA(i) + vB(j)) (kernels/bf16/fp64_gemm.cc). Per element the operations are those of one
// product at a time -- acc := acc + (double)t * scale, the multiply rounded, then the add
// rounded -- in schedule order, so the bits do not depend on the table. The AVX-512 table keeps
// two accumulator rows in registers across the batch (one load and one store per row instead
// of one per product) and fuses the multiply and add where that is provably the same
// (reconstruct_avx512.cc); tests/kernels/isa/kernels_reconstruct_test.cc checks both tables
// against the definition bit for bit. Until this table was used by dgemm, the widen-add ran as
// a plain loop in kernels/bf16/fp64_gemm.cc (SSE2, the accumulator loaded and stored per product): about 3x
// slower in the routed call on the AVX-512 machine of docs/bench.
//
// Why not fewer, larger FP32 partial sums before widening (adding two products' panels in FP32
// first, or summing more than BK = 256 K values in FP32): the panel sum of product (i, j) is a
// multiple of u = 2^(vA(i) + vB(j) - 16) of magnitude at most 256 * 2^(vA(i) + vB(j)) =
// 2^24 u (kernels/bf16/macro_kernel.h), which is exactly the 24-bit significand of FP32. Any other term -- a
// 257th K value, or a second product with the same unit, as (0, 1) and (1, 0) have when both
// operands shrink by exactly 9 bits per slice -- can double the bound to 2^25 u, which FP32 no
// longer holds exactly, and the FP64 bits would then depend on the order of the additions.
// Two products whose units differ do not help either: the sum is a multiple of the smaller
// unit and the larger product's bound, in those units, exceeds 2^24. So the invariant "every
// per-panel FP32 sum is exact" admits exactly one product and at most 256 K values per widening.
#pragma once

#include <cstddef>

namespace amxblas::kernels {

struct ReconstructKernels {
    // acc[r * ldacc + c] += tile[r * 32 + c] for a 32x32 FP32 tile, FP32 addition.
    void (*add_fp32)(const float* tile, float* acc, int ldacc);
    // acc[r * ldacc + c] = acc[r * ldacc + c] + (double)tiles[q][r * 32 + c] * scales[q] for
    // q = 0 .. count - 1, in that order, tiles[q] = tiles + q * 1024; the product rounded, then
    // the sum (reconstruct_avx512.cc fuses the two where the product is exact: same bits).
    void (*widen_add)(const float* tiles, const double* scales, int count, double* acc, int ldacc);
    // C(i, j) := alpha * acc[i * ldacc + j] + beta * C(i, j), C column-major (c[i + j * ldc]),
    // for i < rows, j < cols; with beta = 0, alpha * acc[...] and C not read. Each product and
    // the sum rounded, in that order (no fused operations): the one write of a routed call's
    // results (kernels/engine/gemm_call.h write_block). The accumulator's rows are C's columns
    // transposed: the AVX-512 table transposes 8 x 8 blocks in registers.
    void (*write_fp64)(const double* acc, int ldacc, int rows, int cols, double alpha, double beta, double* c,
                       std::size_t ldc);
};

// The definition of write_fp64, for any table and the tests.
void write_fp64_definition(const double* acc, int ldacc, int rows, int cols, double alpha, double beta, double* c,
                           std::size_t ldc);

// The portable definitions above for a rows x cols tile (row stride cols; tiles[q] = tiles +
// q * rows * cols): what a micro-kernel set whose geometry is not kAmxGeometry (microkernel.h)
// uses, since the tables are written for its 32x32 tiles. Same per-element operations, so the
// FP64 bits are those of the tables.
void add_fp32_tile(const float* tile, int rows, int cols, float* acc, int ldacc);
void widen_add_tile(const float* tiles, int rows, int cols, const double* scales, int count, double* acc, int ldacc);

// Each instruction set's table (kernels/isa/<set>/).
const ReconstructKernels& reconstruct_kernels_portable();
const ReconstructKernels& reconstruct_kernels_avx512();
// The one the library uses: that of the process's instruction set (kernels/isa/isa.h).
const ReconstructKernels& reconstruct_kernels();

}  // namespace amxblas::kernels

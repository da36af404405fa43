// The blocked driver's entry points for the kernels' own callers (real_gemm.cc's SGEMM/DGEMM and
// complex_gemm.cc's CGEMM/ZGEMM): one real GEMM op(A) (m x k) times op(B) (k x n), read through
// the packer's views (pack.h), computed by the FP32 or FP64 method on the one macro-kernel,
// and handed back one block at a time. The caller's writer stores the block into its C: acc is
// row-major with row stride kBlockN and holds op(A) op(B) for rows i0 .. i0 + rows - 1 and
// columns j0 .. j0 + cols - 1, rows <= BM and cols <= BN. The blocks of one call are BM x BN,
// or squares of 128 or 64 for calls with few blocks (macro_kernel.h's Blocking), so j0 is even, and
// so is cols when n is. Blocks are written by the pool's threads concurrently; no two blocks
// overlap. Same failure contract as emulated_gemm.h (C untouched).
#pragma once

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/engine/gemm_call.h"
#include "kernels/engine/guard.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// BlockWriter and Fp64Repairer: kernels/engine/gemm_call.h.

// FP32: split, pack, compute, write, in one call (fp32_gemm.cc).
const char* run_fp32_gemm(const OperandView<float>& a, const OperandView<float>& b, int m, int n, int k,
                          const RunOptions& opt, const BlockWriter<float>& write);
// FP64, phase 1 (emulated_gemm.h; fp64_gemm.cc): the split's facts; compute_dgemm later packs, runs the products and
// calls `write`, which therefore owns whatever it needs (a copy of the caller's arguments).
const char* prepare_fp64_gemm(const OperandView<double>& a, const OperandView<double>& b, int m, int n, int k,
                              const RunOptions& opt, BlockWriter<double> write, PreparedDgemm* out);

// compute_dgemm's repairs for the caller's C (kernels/engine/gemm_call.h), after a successful
// prepare_fp64_gemm; without them compute_dgemm refuses repairs.
void set_fp64_repairer(PreparedDgemm* prepared, Fp64Repairer repairer);

}  // namespace amxblas::kernels

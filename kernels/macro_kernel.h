// The blocked driver's entry points for the kernels' own callers (driver.cc's SGEMM/DGEMM and
// complex_gemm.cc's CGEMM/ZGEMM): one real GEMM op(A) (m x k) times op(B) (k x n), read through
// the packer's views (pack.h), computed by the FP32 or FP64 method, and handed back one
// BM x BN block at a time. The caller's writer stores the block into its C: acc is row-major
// with row stride kBlockN and holds op(A) op(B) for rows i0 .. min(i0 + BM, m) - 1 and
// columns j0 .. min(j0 + BN, n) - 1. Blocks are written by the OpenMP threads concurrently;
// no two blocks overlap. Same failure contract as emulated_gemm.h (C untouched).
#pragma once

#include <functional>

#include "kernels/emulated_gemm.h"
#include "kernels/pack.h"

namespace amxblas::kernels {

template <typename Acc>
using BlockWriter = std::function<void(int i0, int j0, const Acc* acc)>;

const char* run_fp32_gemm(const OperandView<float>& a, const OperandView<float>& b, int m, int n,
                          int k, const RunOptions& opt, const BlockWriter<float>& write);
const char* run_fp64_gemm(const OperandView<double>& a, const OperandView<double>& b, int m, int n,
                          int k, const RunOptions& opt, const BlockWriter<double>& write);

}  // namespace amxblas::kernels

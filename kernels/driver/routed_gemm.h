// A routed call's run on the kernels: what the shim calls once decide() routed a call and its
// domain check passed; the kernel tests and the benchmark call it too, so they run exactly what
// the library runs.
//
// FP32 (SGEMM, CGEMM) is one call of the BF16 component products (kernels/bf16/). FP64 (DGEMM,
// ZGEMM) runs on the engines of kernels/common/engines.def (kernels/driver/fp64_engines.h): with
// a fixed count, the engine the count is for; with AMXBLAS_FP64_PRODUCTS=auto, each engine in
// the table's order certifies the call entry by entry and the first whose certificate passes
// runs it (the rest forward with accuracy:uncertified). Before any engine's certificate runs
// on the whole call, auto certifies a sample of its entries and forwards a call whose sample
// mostly fails (kernels/driver/gemm_sample.h; docs/fp64-certificate.md, Section 11). Nothing
// is written to C unless the call returns nullptr; otherwise the return value is the forward
// reason (kernels/bf16/emulated_gemm.h lists the kernels' own).
#pragma once

#include <complex>

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

const char* emulate_gemm(const GemmArgs<float>& args, const RunOptions& opt);
// opt.fp64_products: the retained products (6 ... 36), or kFp64Auto.
const char* emulate_gemm(const GemmArgs<double>& args, const RunOptions& opt);
// CGEMM and ZGEMM (kernels/engine/gemm_call.h): the same, on the real GEMM of the parts, whose
// depth is 2K. ZGEMM's auto certifies each part of C against gamma_{K+1}, the bound of a complex
// inner product of length K in real arithmetic, and repairs whole complex entries
// (docs/fp64-certificate.md, Section 9).
const char* emulate_gemm(const GemmArgs<std::complex<float>>& args, const RunOptions& opt);
const char* emulate_gemm(const GemmArgs<std::complex<double>>& args, const RunOptions& opt);

}  // namespace amxblas::kernels

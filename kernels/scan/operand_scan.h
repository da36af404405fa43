// One read-only pass over an operand that summarises what the domain rules need.
//
// The set of entries of op(X) is the set of entries of the stored X, so the scan walks the
// stored (rows x cols, column-major, leading dimension ld) matrix whatever the transpose.
// Two implementations, portable and AVX-512 (kernels/isa/avx512/operand_scan_avx512.cc); they return identical summaries for every input (only comparisons and exact
// operations are used, so the order of the reduction does not matter), and scan_fp32/fp64
// pick one per process from the CPU. The summary is kept in a struct so that the kernels can
// reuse it (v(0) = max_exponent() is the first Ozaki exponent of the FP64 split).
#pragma once

#include <cstddef>
#include <complex>
#include <cstdint>

#include "kernels/common/gemm_types.h"
#include "kernels/common/operand_summary.h"
#include "kernels/isa/isa.h"

namespace amxblas::kernels {


// Which implementation scan_* use in this process: the instruction set of kernels/isa/isas.def
// this CPU runs (isa_here()); scan_*_with take another, and fall back to that one where the
// CPU cannot run it.
using ScanImpl = Isa;
inline ScanImpl scan_impl() { return isa_here(); }
inline const char* scan_impl_name(ScanImpl impl) { return isa_name(impl); }
inline bool scan_avx512_available() { return isa_runs(Isa::avx512); }

// threads: how many threads may share a large scan (the kernels' pool, as the routed call
// will); the summary is the same for every count.
OperandSummary scan_fp32(const float* x, int rows, int cols, std::int64_t ld, int threads = 1);
OperandSummary scan_fp64(const double* x, int rows, int cols, std::int64_t ld, int threads = 1);

// op(X) of a GEMM operand: rows x cols of op(X) (m x k for A, k x n for B), stored with trans.
OperandSummary scan_fp32_operand(char trans, int rows, int cols, const float* x, std::int64_t ld, int threads = 1);
OperandSummary scan_fp64_operand(char trans, int rows, int cols, const double* x, std::int64_t ld, int threads = 1);
// The same for a complex op(X) (trans 'N', 'T' or 'C'): the summary of the real and imaginary
// parts of its entries (conjugation changes no magnitude). x points at the interleaved
// storage (real, imaginary), ld counts complex elements.
OperandSummary scan_fp32_complex_operand(char trans, int rows, int cols, const float* x, std::int64_t ld,
                                         int threads = 1);
OperandSummary scan_fp64_complex_operand(char trans, int rows, int cols, const double* x, std::int64_t ld,
                                         int threads = 1);

// The two implementations by name, for tests and the benchmark.
OperandSummary scan_fp32_with(ScanImpl impl, const float* x, int rows, int cols, std::int64_t ld, int threads = 1);
OperandSummary scan_fp64_with(ScanImpl impl, const double* x, int rows, int cols, std::int64_t ld, int threads = 1);

// op(A), then op(B) unless op(A) holds a nonfinite entry (then b stays all zero): what the
// policy's domain rules judge (policy/domain.h). Complex operands are summarised by their
// real and imaginary parts. threads: how many threads may share a large scan; the summaries
// are the same for every count.
OperandScans scan_gemm_operands(const GemmArgs<float>& g, int threads = 1);
OperandScans scan_gemm_operands(const GemmArgs<double>& g, int threads = 1);
OperandScans scan_gemm_operands(const GemmArgs<std::complex<float>>& g, int threads = 1);
OperandScans scan_gemm_operands(const GemmArgs<std::complex<double>>& g, int threads = 1);


}  // namespace amxblas::kernels

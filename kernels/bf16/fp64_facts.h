// The first pass of a routed DGEMM or ZGEMM over one operand (internal: fp64_gemm.cc): what the
// split of the whole operand finds, found chunk by chunk (chunking.h) in a chunk buffer, so
// that no whole-operand slices are ever kept.
#pragma once

#include "kernels/bf16/chunking.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// op(X) (is_a: op(A), split by rows; else op(B), by columns) scaled by exps, which
// fp64_outer_exponents found with `nonzero`: the scales by the speculation of split_pack
// (pack_fp64.h, speculate_scales), the residual maxima, sp->norms when set, and whether a
// scaled value fell below 2^-1022: the same values, bit for bit, as split_pack of the whole
// operand gives (the maxima and the flag are taken over the chunks; the norms are exact sums,
// so their chunk totals add up to the same values). `buf` is a chunk buffer for `outer_chunk`
// rows (columns) and `k_chunk` of K, with sp's slices; its contents are left undefined.
// Returns nullptr, or the worst slice-range reason over the chunks (a safety net, pack.h).
const char* fp64_split_facts(bool is_a, const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                             PackedOperand buf, int outer_chunk, int k_chunk, const SplitKernels& sk, int threads);

}  // namespace amxblas::kernels

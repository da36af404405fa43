// The portable packer for any micro-kernel geometry (microkernel.h): what pack.cc hands every
// operand whose geometry is not kAmxGeometry. The fast paths (AVX-512 gathers, fused gather +
// split, exponent scan inside the pack) are written for kAmxGeometry's 32x32 blocks; here each
// block is gathered element by element into a staging tile in the geometry's packed order and
// split there with the same split table (split.h), so every slice value is the one the fast
// path computes, only placed for the other geometry. Not tuned: no production set uses it.
#pragma once

#include "kernels/pack.h"
#include "kernels/per_participant.h"

namespace amxblas::kernels {

// One participant's part of an FP64 pack's reductions (pack.cc and here), a cache line of its
// own: the worst slice status, whether a scaled value fell below 2^-1022, max |X^(t)|.
struct alignas(kCacheLine) Fp64PackPartial {
    int worst = 0;
    bool subnormal = false;
    double mx[kFp64Slices + 1] = {};
};

// The participants' parts folded: resid_max (optional) gets the maxima, *subnormal (optional)
// the flag; returns nullptr or the slice range reason of the worst status.
const char* fold_fp64_partials(const PerParticipant<Fp64PackPartial>& part, double* resid_max, bool* subnormal);

// pack_a_fp32 / pack_b_fp32 (pack.h) for out.geom.
void pack_fp32_generic(bool is_a, const OperandView<float>& x, const PackedOperand& out, const SplitKernels& sk,
                       int threads);

// pack.cc's pack_fp64 without the exponent scan, for out.geom: op(X) scaled by exps (nullptr:
// unscaled), split with sc; resid_max, norms, subnormal optional, as there (pack.h,
// Fp64Split). Returns nullptr or the slice range reason.
const char* pack_fp64_generic(bool is_a, const OperandView<double>& x, const int* exps, const Fp64Scales& sc,
                              const PackedOperand& out, const SplitKernels& sk, int threads, double* resid_max,
                              double* norms, bool* subnormal);

}  // namespace amxblas::kernels

// A screen in front of the sampled decision of FP64 auto (gemm_sample.h, routed_gemm.cc): which
// entries of a sample fail each engine's certificate at every count, shown without the
// engines' certificates, pack or tile padding (docs/fp64-certificate.md, Section 12).
//
// From the sample's operands, scaled by their rows' and columns' exponents, it computes an
// upper bound U_ij of (|A||B|)_ij in FP64 (kernels/engine/scaled_sample.h) and asks each engine
// tried for the entries its certificate is shown to fail against it (Fp64EngineOps::screen:
// kernels/int8/int8_engine.cc, kernels/bf16/bf16_screen.h). An entry counted for an engine
// fails that engine's certificate on the sample too. So a screen that counts more than half of
// the sample for every engine tried forwards the call as the sample's certificates would, at a
// fraction of their cost; a screen that does not changes nothing: the certificates run as
// before.
#pragma once

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

struct SampleScreen {
    // By Fp64Engine: entries of the sample's real GEMM (ZGEMM: parts) shown to fail that
    // engine's certificate at every count; -1 where the screen cannot tell (not asked for, an
    // Inf or NaN, a slice range reason, an unavailable backend, a failed lease).
    long failing[kFp64EngineCount];
    SampleScreen() {
        for (long& f : failing) f = -1;
    }
    long of(Fp64Engine e) const { return failing[static_cast<int>(e)]; }
};

// s: a sample of sample_gemm (N N, r x c x K, contiguous copies). tried: by Fp64Engine, the
// engines to screen, in the table's order; opt: the sample's options (one thread). enough: the
// count the caller acts above; the screen stops once the outcome is known: an engine counting
// at most `enough`, or that cannot tell, leaves those after it unscreened (-1), and an
// engine's count may stop short once above it. A negative `enough` counts everything (the tests).
template <typename T>
SampleScreen screen_sample(const GemmArgs<T>& s, const RunOptions& opt, const bool* tried, long enough);

}  // namespace amxblas::kernels

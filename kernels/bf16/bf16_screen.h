// The BF16 engine's screen of a sample (kernels/engine/fp64_engine.h, Fp64EngineOps::screen;
// the argument is docs/fp64-certificate.md, Section 12): a lower bound of the error bound its
// certificate would evaluate at every depth, the truncation terms rho_A(8) ||B_j||_1 and
// a_0(i) rho_B(8) of the eight-slice split, against U_ij >= (|A||B|)_ij. An entry counted here
// fails the BF16 certificate on the sample too.
#pragma once

#include <vector>

#include "kernels/common/gemm_types.h"
#include "kernels/engine/scaled_sample.h"

namespace amxblas::kernels {

long bf16_screen(ScaledSample& x, const RunOptions& opt, long enough);

// The facts of the BF16 engine's split that the screen computes for itself, of the sample's real
// GEMM: max |X^(8)| of the scaled op(A) and op(B), and a_0(i) = sum_l |Z_0(i, l)| per row of
// op(A). For the tests, which compare them with the engine's own (prepare_dgemm's). False
// where the screen would not run (an Inf or NaN, a failed lease).
struct ScreenSplitFacts {
    double rho_a = 0, rho_b = 0;
    std::vector<double> a0;
};
template <typename T>
bool screen_split_facts(const GemmArgs<T>& s, ScreenSplitFacts* out);

}  // namespace amxblas::kernels

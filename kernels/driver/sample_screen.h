// A screen in front of the sampled decision of FP64 auto (gemm_sample.h, routed_gemm.cc): which
// entries of a sample fail each engine's certificate at every count, shown without either
// engine's magnitude product, pack or tile padding (docs/fp64-certificate.md, Section 12).
//
// From the sample's operands, scaled by their rows' and columns' exponents, it computes an
// upper bound U_ij of (|A||B|)_ij in FP64 and, per engine, a lower bound of the error bound that
// engine's certificate would evaluate at each of its counts: the INT8 certificate's own test
// with U_ij in place of its lower bound L_ij <= (|A||B|)_ij (Int8BlockCertificate::
// fails_at_every_count); for BF16, the truncation terms rho_A(8) ||B_j||_1 and
// a_0(i) rho_B(8) of the eight-slice split, which its bound includes at every depth. An entry
// counted here fails that engine's certificate on the sample too. So a screen that counts more
// than half of the sample for every engine tried forwards the call as the sample's certificates
// would, at a fraction of their cost; a screen that does not changes nothing: the certificates
// run as before.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

struct SampleScreen {
    // Entries of the sample's real GEMM (ZGEMM: parts) shown to fail that engine's certificate
    // at every count; -1 where the screen cannot tell (not asked for, an Inf or NaN, a slice
    // range reason, an unavailable backend, a failed lease).
    long int8_failing = -1, bf16_failing = -1;
};

// s: a sample of sample_gemm (N N, r x c x K, contiguous copies). int8, bf16: the engines to
// screen; opt: the sample's options (one thread). enough: the count the caller acts above; the
// screen stops once the outcome is known: INT8, screened first, counting at most `enough`
// leaves BF16 unscreened (-1), and BF16's count may stop short once above it. A negative
// `enough` counts everything (the tests).
template <typename T>
SampleScreen screen_sample(const GemmArgs<T>& s, const RunOptions& opt, bool int8, bool bf16, long enough);

// The workspace screen_sample leases for a sample of r x c x k (parts: 2 for ZGEMM): the
// scaled rows of the real GEMM's operands (gemm_sample.cc sizes its arena for it).
std::size_t sample_screen_bytes(int r, int c, int k, int parts);

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

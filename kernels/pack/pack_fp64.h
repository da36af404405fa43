// The FP64 packer (internal: kernels/bf16/, and the tests' reference entry points in
// tests/kernels/pack/pack_test_entry.h): a pack with given scales, and the speculation that finds
// the scales.
#pragma once

#include <cmath>

#include "kernels/pack/fp64_exponents.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// Splits and packs op(X), scaled by exps (nullptr: unscaled), with the scales sc; resid_max:
// nullptr, or where to gather max |X^(t)|, t = 0..sc.slices (SplitKernels::fp64).
// norms, subnormal: optional, see Fp64Split.
template <bool IsA>
const char* pack_fp64(const OperandView<double>& x, const int* exps, const Fp64Scales& sc, const PackedOperand& out,
                      const SplitKernels& sk, int threads, double* resid_max = nullptr, double* norms = nullptr,
                      bool* subnormal = nullptr);

// The slice exponents of the scaled op(X), found by speculating v(r) = -9r and checking it with
// the residual maxima of the same pass (usually one pass over op(X); at most `slices` on data
// whose residuals shrink faster). pack_all(guess) splits all of op(X) with the scales `guess`
// into sp->resid (the maxima), sp->norms and sp->subnormal_scaled, whether at once (split_pack,
// below) or chunk by chunk (kernels/bf16/fp64_facts.cc), and returns nullptr or its
// slice-range reason, "domain:slice-subnormal" / "domain:slice-overflow" (a safety net: the
// normalised slices cannot leave the BF16 range). Sets sp->sc (`slices` slices; nonzero: from
// fp64_outer_exponents) and returns the last pass's reason.
//
// Speculative scales: v(0) = 0 (every nonzero scaled row or column has max |x| in (1/2, 1]),
// then v(t) = v(t-1) - 9, what a residual that keeps 9 bits per slice gives (fact (b) of
// docs/fp64-certificate.md bounds it from above; dense data meets it). One tracked pass with
// those scales measures max |X^(t)| under them; scale t is confirmed when ozaki_sigma() of that
// max is the guess, and then max |X^(t+1)| was measured under true scales too. A zero max, or
// one below 2^kFp64MinSliceExp, ends the chain. Every confirmed pass is the pass the exact
// scales give, bit for bit: same arithmetic, and slices past the chain's end are splits of a
// zero residual, +0 under any scale. A refuted guess t is replaced by the measured (exact)
// scale and the operand is split again: at most `slices` passes, one on dense data.
// The speculation's state, for passes driven from outside (speculate_scales, and the compute
// of a prepared DGEMM that splits with the first guess as it goes: kernels/bf16/fp64_gemm.cc).
class ScaleSpeculation {
public:
    ScaleSpeculation(bool nonzero, int slices);
    // The scales to split the next pass with.
    const Fp64Scales& guess() const { return guess_; }
    // After a pass with guess() whose residual maxima are resid[0 .. slices]: true when they
    // confirm it, and then *found holds the scales (guess() with the chain's true end); false,
    // and guess() is the next guess.
    bool confirm(const double* resid, Fp64Scales* found);
    // After a pass with guess() over part of op(X) (resid: that part's maxima): true when they
    // meet every guessed scale, and then *found holds the scales of the whole operand. Each
    // guess is an upper bound once the scales before it are right (fact (a) of
    // docs/fp64-certificate.md: |X^(t+1)| <= 2^(v(t) - 9)) and the whole operand's maxima are
    // at least the part's, so the whole operand meets every guess too, and its chain ends
    // where the guess's does. A part that meets a guess only in part proves nothing.
    bool settled_by_part(const double* resid, Fp64Scales* found) const;

private:
    void next_guess();
    Fp64Scales sc_, guess_;
    int known_ = 0;        // scales 0 .. known_ - 1 are exact
    bool closed_ = false;  // the chain ends at known_
};

template <typename PackAll>
const char* speculate_scales(bool nonzero, int slices, Fp64Split* sp, PackAll&& pack_all) {
    ScaleSpeculation spec(nonzero, slices);
    for (;;) {
        const char* why = pack_all(spec.guess());
        if (spec.confirm(sp->resid, &sp->sc)) return why;
    }
}

// Splits and packs the whole scaled op(X) (exps from fp64_outer_exponents, nonzero from it too)
// with the scales speculate_scales finds: the reference the chunked first pass of a routed call
// (kernels/bf16/fp64_facts.h) matches, for the tests.
template <bool IsA>
const char* split_pack(const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                       const PackedOperand& out, const SplitKernels& sk, int threads);

}  // namespace amxblas::kernels

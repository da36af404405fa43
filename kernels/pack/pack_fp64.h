// The FP64 packer's two stages below pack.h's entry points (internal: pack_fp64.cc, and the
// tests' reference entry points in tests/kernels/pack_test_entry.h): a pack with given scales,
// and the split that finds the scales by speculation.
#pragma once

#include <cmath>

#include "kernels/common/reasons.h"
#include "kernels/pack/fp64_exponents.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// Splits and packs op(X), scaled by exps (nullptr: unscaled), with the scales sc; resid_max:
// nullptr, or where to gather max |X^(t)|, t = 0..sc.slices (SplitKernels::fp64).
// norms, subnormal: optional, see Fp64Split.
//
// With scan (real views only), the exponents exps are found here: each task takes a whole
// panel, scans its rows (columns) into exps and then packs its blocks while their source is
// still in cache, so op(X) is read from memory once instead of twice.
template <bool IsA>
const char* pack_fp64(const OperandView<double>& x, const int* exps, const Fp64Scales& sc, const PackedOperand& out,
                      const SplitKernels& sk, int threads, double* resid_max = nullptr, double* norms = nullptr,
                      bool* subnormal = nullptr, ExponentScan* scan = nullptr, const int* guess = nullptr);

// Splits and packs the scaled op(X) (exps from fp64_outer_exponents, nonzero from it too):
// finds the slice exponents by speculating v(r) = -9r and checking it with the residual maxima
// of the same pass (usually one read of op(X); at most sp->sc.slices on data whose residuals
// shrink faster), writes sp->sc.slices slices and the residual maxima. Returns nullptr, or
// "domain:slice-subnormal" / "domain:slice-overflow" (a safety net: the normalised slices
// cannot leave the BF16 range).
//
// Speculative scales: v(0) = 0 (every nonzero scaled row or column has max |x| in (1/2, 1]),
// then v(t) = v(t-1) - 9, what a residual that keeps 9 bits per slice gives (fact (b) of
// docs/fp64-certificate.md bounds it from above; dense data meets it). One tracked pack with
// those scales measures max |X^(t)| under them; scale t is confirmed when ozaki_sigma() of that
// max is the guess, and then max |X^(t+1)| was measured under true scales too. A zero max, or
// one below 2^kFp64MinSliceExp, ends the chain. Every confirmed pack is the pack the exact
// scales give, bit for bit: same arithmetic, and slices past the chain's end are splits of a
// zero residual, +0 under any scale. A refuted guess t is replaced by the measured (exact)
// scale and the operand is packed again: at most sc.slices packs, one on dense data.
//
// With scan, exps are found by the first pack (pack_fp64), which speculates that op(X) is
// nonzero; if it was all zero, that pack wrote the zero slices the exact (empty) scales give,
// and only the scales are reset. With exp_guess too, that first pack scales by the guessed
// exponents and packs again the panels whose guess was wrong (pack_fp64).
// What one pack of the whole operand under guessed scales found, for speculate_scales: its
// slice-range reason, and (a pack that also scanned op(X)) whether op(X) held an Inf or NaN or
// was all zero.
struct SpeculatedPack {
    const char* why = nullptr;
    bool nonfinite = false, all_zero = false;
};

// The speculation of split_pack (below) over any way of packing the whole operand:
// pack_all(guess) splits all of op(X) with the scales `guess` into sp->resid, sp->norms and
// sp->subnormal_scaled (the whole split split_pack does at once, or chunk by chunk:
// kernels/driver/fp64_facts.cc) and returns a SpeculatedPack. Sets sp->sc (`slices` slices)
// and returns the last pack's reason, or "domain:nonfinite".
template <typename PackAll>
const char* speculate_scales(bool nonzero, int slices, Fp64Split* sp, PackAll&& pack_all) {
    Fp64Scales& sc = sp->sc;
    sc = Fp64Scales{};
    sc.slices = slices;
    int known = 0;  // scales 0..known-1 are exact
    if (nonzero) {
        sc.sigma[0] = ozaki_sigma(1.0);
        known = 1;
    }
    bool closed = !nonzero;  // the chain ends at `known`
    for (bool first = true;; first = false) {
        Fp64Scales guess = sc;
        guess.active = known;
        while (!closed && guess.active < guess.slices) {
            const int v = ozaki_v(guess.sigma[guess.active - 1]) - 9;
            if (v < kFp64MinSliceExp) break;
            guess.sigma[guess.active] = std::ldexp(0.75, v + kOzakiRho);
            ++guess.active;
        }
        set_slice_norms(&guess);
        const SpeculatedPack packed = pack_all(guess);
        if (first && packed.nonfinite) return reason::domain_nonfinite;
        if (first && packed.all_zero) {
            sc = Fp64Scales{};
            sc.slices = slices;
            set_slice_norms(&sc);
            return packed.why;
        }
        int t = known;
        while (t < guess.active && sp->resid[t] != 0 && ozaki_sigma(sp->resid[t]) == guess.sigma[t]) ++t;
        if (closed || t == guess.active || sp->resid[t] == 0) {
            sc = guess;
            sc.active = t;
            set_slice_norms(&sc);
            return packed.why;
        }
        for (int r = known; r <= t; ++r) sc.sigma[r] = guess.sigma[r];
        sc.sigma[t] = ozaki_sigma(sp->resid[t]);  // measured under confirmed scales: exact
        if (ozaki_v(sc.sigma[t]) < kFp64MinSliceExp) {
            known = t;
            closed = true;
        } else {
            known = t + 1;
        }
    }
}

template <bool IsA>
const char* split_pack(const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                       const PackedOperand& out, const SplitKernels& sk, int threads, ExponentScan* scan = nullptr,
                       const int* exp_guess = nullptr);

}  // namespace amxblas::kernels

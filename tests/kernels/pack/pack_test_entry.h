// The packer's reference entry points for the tests (kernels_split_test, split_pack_phases):
// thin wrappers of pack_fp64.h's stages, and the matrix-wide scales by sequential passes.
#pragma once

#include <algorithm>

#include "kernels/common/reasons.h"
#include "kernels/pack/fp64_exponents.h"
#include "kernels/pack/pack.h"
#include "kernels/pack/pack_fp64.h"
#include "kernels/runtime/per_participant.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

// One participant's part of scale_passes's reduction, a cache line of its own.
struct alignas(kCacheLine) AbsMaxPartial {
    double mx = 0;
    bool nonfinite = false;
};

// The sequential reduction passes r = sc->active .. sc->slices - 1 over an unscaled operand
// (each needs the scales before it), stopping at a zero residual or one below
// 2^kFp64MinSliceExp.
inline const char* scale_passes(const OperandView<double>& x, const SplitKernels& sk, int threads, Fp64Scales* sc) {
    // The max is over op(X) as a whole, so the stored columns can be scanned as they lie. The
    // entries of a complex view's op(X') are the parts of the stored ones, some negated: the
    // same magnitudes, and a stored complex column of n entries is 2n contiguous parts.
    const bool by_cols = x.trans == 'N';
    int len = by_cols ? x.rows : x.cols;    // contiguous run
    int runs = by_cols ? x.cols : x.rows;
    std::size_t ld = std::size_t(x.ld);
    if (x.kind != Interleave::real) {
        const int crows = x.kind == Interleave::complex_a ? x.rows : x.rows / 2, ccols = x.cols / 2;
        len = 2 * (by_cols ? crows : ccols);
        runs = by_cols ? ccols : crows;
        ld *= 2;
    }
    for (int r = sc->active; r < sc->slices; ++r) {
        PerParticipant<AbsMaxPartial> part(std::max(1, threads));
        parallel_for(threads, runs, [&](int j, int who) {
            const AbsMax m = sk.fp64_absmax(x.x + std::size_t(j) * ld, std::size_t(len), *sc, r);
            part[who].mx = std::max(part[who].mx, m.value);
            part[who].nonfinite = part[who].nonfinite || m.nonfinite;
        });
        double mx = 0;
        bool nonfinite = false;
        for (const AbsMaxPartial& pp : part) {
            mx = std::max(mx, pp.mx);
            nonfinite = nonfinite || pp.nonfinite;
        }
        if (nonfinite) return reason::domain_nonfinite;
        if (mx == 0 || ceil_log2(mx) < kFp64MinSliceExp) break;  // the chain ends here
        sc->sigma[r] = ozaki_sigma(mx);
        sc->active = r + 1;
    }
    set_slice_norms(sc);
    return nullptr;
}

// The matrix-wide scales of an (already scaled) operand by sequential reduction passes (Eq. 13;
// "domain:nonfinite" on Inf/NaN).
inline const char* fp64_scales(const OperandView<double>& x, const SplitKernels& sk, int threads, int slices,
                               Fp64Scales* sc) {
    *sc = Fp64Scales{};
    sc->slices = slices;
    return scale_passes(x, sk, threads, sc);
}

// A pack with given scales (exps nullptr: no scaling): pack_fp64 (pack_fp64.h).
inline const char* pack_a_fp64(const OperandView<double>& a, const int* row_exps, const Fp64Scales& sc,
                               const PackedOperand& out, const SplitKernels& sk, int threads) {
    return pack_fp64<true>(a, row_exps, sc, out, sk, threads);
}

inline const char* pack_b_fp64(const OperandView<double>& b, const int* col_exps, const Fp64Scales& sc,
                               const PackedOperand& out, const SplitKernels& sk, int threads) {
    return pack_fp64<false>(b, col_exps, sc, out, sk, threads);
}

// The split + pack of a whole operand with known exponents (fp64_outer_exponents): split_pack
// (pack_fp64.h), the reference of the routed call's chunked first pass.
inline const char* split_pack_a_fp64(const OperandView<double>& a, const int* row_exps, bool nonzero, Fp64Split* sp,
                                     const PackedOperand& out, const SplitKernels& sk, int threads) {
    return split_pack<true>(a, row_exps, nonzero, sp, out, sk, threads);
}

inline const char* split_pack_b_fp64(const OperandView<double>& b, const int* col_exps, bool nonzero, Fp64Split* sp,
                                     const PackedOperand& out, const SplitKernels& sk, int threads) {
    return split_pack<false>(b, col_exps, nonzero, sp, out, sk, threads);
}

}  // namespace amxblas::kernels

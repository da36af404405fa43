// The FP64 split + pack (pack.h): op(X) scaled by its row (column) exponents, gathered, split
// into the slices of the given scales, packed; and split_pack, with the speculated scales.
#include "kernels/pack/pack_fp64.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/pow2.h"
#include "kernels/common/reasons.h"
#include "kernels/pack/pack_blocks.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

// The factors of rows (A) or columns (B) first .. first + count - 1 (split.h, BlockScale); 1
// past the edge.
void block_scale(const int* exps, int first, int count, BlockScale* bs) {
    bs->two_step = false;
    for (int r = 0; r < kTile; ++r) {
        const int e = r < count ? exps[first + r] : 0;
        bs->f1[r] = e >= -1023 ? pow2(-e) : pow2(1023);
        bs->f2[r] = e >= -1023 ? 1.0 : pow2(-e - 1023);
        bs->two_step = bs->two_step || e < -1023;
    }
}

// Adds each row's (A) or column's (B) sum of |normalised slice entry| of one packed block to
// norms[t * outer + first + r]. The block sums are exact in FP32 (32 multiples of 2^-8 of at
// most 1), and so are the FP64 totals, whatever order the threads add them in.
template <bool IsA>
void add_slice_norms(const bf16_t* const dst[kFp64Slices], int slices, int first, int count, int outer,
                     double* norms) {
    // |x| of a BF16 value as an FP32: the sign bit cleared, widened.
    const auto mag = [](bf16_t h) { return bits_float(std::uint32_t(h & 0x7FFF) << 16); };
    for (int t = 0; t < slices; ++t) {
        float sum[kTile] = {};
        const bf16_t* blk = dst[t];
        // Every partial sum is a multiple of 2^-8 of at most 32: exact in FP32, so the sums
        // may be taken in any order; these orders are the ones a compiler vectorises (no
        // reduction across a loop: lanes add lanes).
        if (IsA) {  // row r holds its 32 K values contiguously
            for (int r = 0; r < kTile; ++r) {
                float lane[kTile / 2];
                for (int c = 0; c < kTile / 2; ++c) lane[c] = mag(blk[r * kTile + c]) + mag(blk[r * kTile + kTile / 2 + c]);
                for (int w = kTile / 4; w >= 1; w /= 2)
                    for (int c = 0; c < w; ++c) lane[c] += lane[c + w];
                sum[r] = lane[0];
            }
        } else {  // each half: 16 rows of K pairs, column c at positions 2c and 2c + 1
            for (int h = 0; h < 2; ++h) {
                float lane[kTile] = {};
                for (int s = 0; s < kHalfElems / kTile; ++s)
                    for (int x = 0; x < kTile; ++x) lane[x] += mag(blk[h * kHalfElems + s * kTile + x]);
                for (int c = 0; c < kTile / 2; ++c) sum[h * (kTile / 2) + c] = lane[2 * c] + lane[2 * c + 1];
            }
        }
        for (int r = 0; r < count; ++r)
            if (sum[r] != 0) {
                // Exact sums: any interleaving of the threads' additions gives the same total.
                std::uint64_t* total = reinterpret_cast<std::uint64_t*>(&norms[std::size_t(t) * outer + first + r]);
                std::uint64_t old = __atomic_load_n(total, __ATOMIC_RELAXED), next;
                do {
                    double v;
                    std::memcpy(&v, &old, sizeof v);
                    v += double(sum[r]);
                    std::memcpy(&next, &v, sizeof next);
                } while (!__atomic_compare_exchange_n(total, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
            }
    }
}

}  // namespace

template <bool IsA>
const char* pack_fp64(const OperandView<double>& x, const int* exps, const Fp64Scales& sc, const PackedOperand& out,
                      const SplitKernels& sk, int threads, double* resid_max, double* norms, bool* subnormal) {
    if (out.geom != kAmxGeometry)  // pack_generic.cc
        return pack_fp64_generic(IsA, x, exps, sc, out, sk, threads, resid_max, norms, subnormal);
    if (norms) std::fill(norms, norms + std::size_t(sc.slices) * (IsA ? x.rows : x.cols), 0.0);
    const BlockOrder order = block_order<IsA>(x, out);
    const int outer = IsA ? x.rows : x.cols;
    PerParticipant<Fp64PackPartial>& part = pack_scratch().partials;
    part.assign(std::size_t(std::max(1, threads)), Fp64PackPartial{});
    for_each_packed_block<IsA>(x, order, threads, [&](int q, int who) {
        int p, s;
        order.at(q, &p, &s);
        Fp64PackPartial& mine = part[std::size_t(who)];
        alignas(64) double tile[kStepElems];
        const int count = std::min(kTile, outer - p * kTile);
        BlockSource kind;
        const double* src = full_block<IsA>(x, p, s, &kind);
        if (exps) {
            BlockScale bs;
            block_scale(exps, p * kTile, count, &bs);
            const bool sub = src ? sk.gather_scale_fp64(kind, src, std::size_t(x.ld), IsA, bs, tile)
                                 : (gather_block<IsA>(x, sk, p, s, tile), sk.scale_fp64(IsA, bs, tile));
            mine.subnormal = sub || mine.subnormal;
        } else {
            gather_block<IsA>(x, sk, p, s, tile);
        }
        const std::size_t o = block_offset(out, p, s);
        bf16_t* dst[kFp64Slices] = {};
        for (int t = 0; t < sc.slices; ++t) dst[t] = out.slice[t] + o;
        const SliceStatus st = sk.fp64(tile, kStepElems, sc, dst, resid_max ? mine.mx : nullptr);
        mine.worst = std::max(mine.worst, static_cast<int>(st));
        if (norms) add_slice_norms<IsA>(dst, sc.slices, p * kTile, count, outer, norms);
    });
    return fold_fp64_partials(part, resid_max, subnormal);
}

ScaleSpeculation::ScaleSpeculation(bool nonzero, int slices) {
    sc_.slices = slices;
    if (nonzero) {
        sc_.sigma[0] = ozaki_sigma(1.0);
        known_ = 1;
    }
    closed_ = !nonzero;
    next_guess();
}

void ScaleSpeculation::next_guess() {
    guess_ = sc_;
    guess_.active = known_;
    while (!closed_ && guess_.active < guess_.slices) {
        const int v = ozaki_v(guess_.sigma[guess_.active - 1]) - 9;
        if (v < kFp64MinSliceExp) break;
        guess_.sigma[guess_.active] = std::ldexp(0.75, v + kOzakiRho);
        ++guess_.active;
    }
    set_slice_norms(&guess_);
}

bool ScaleSpeculation::confirm(const double* resid, Fp64Scales* found) {
    int t = known_;
    while (t < guess_.active && resid[t] != 0 && ozaki_sigma(resid[t]) == guess_.sigma[t]) ++t;
    if (closed_ || t == guess_.active || resid[t] == 0) {
        *found = guess_;
        found->active = t;
        set_slice_norms(found);
        return true;
    }
    for (int r = known_; r <= t; ++r) sc_.sigma[r] = guess_.sigma[r];
    sc_.sigma[t] = ozaki_sigma(resid[t]);  // measured under confirmed scales: exact
    if (ozaki_v(sc_.sigma[t]) < kFp64MinSliceExp) {
        known_ = t;
        closed_ = true;
    } else {
        known_ = t + 1;
    }
    next_guess();
    return false;
}

bool ScaleSpeculation::settled_by_part(const double* resid, Fp64Scales* found) const {
    for (int t = known_; t < guess_.active; ++t)
        if (resid[t] == 0 || ozaki_sigma(resid[t]) != guess_.sigma[t]) return false;
    *found = guess_;
    return true;
}

template <bool IsA>
const char* split_pack(const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                       const PackedOperand& out, const SplitKernels& sk, int threads) {
    return speculate_scales(nonzero, out.slices, sp, [&](const Fp64Scales& guess) {
        return pack_fp64<IsA>(x, exps, guess, out, sk, threads, sp->resid, sp->norms, &sp->subnormal_scaled);
    });
}

// Both operands' instances (the drivers and the tests' reference entry points).
template const char* pack_fp64<true>(const OperandView<double>&, const int*, const Fp64Scales&, const PackedOperand&,
                                     const SplitKernels&, int, double*, double*, bool*);
template const char* pack_fp64<false>(const OperandView<double>&, const int*, const Fp64Scales&, const PackedOperand&,
                                      const SplitKernels&, int, double*, double*, bool*);
template const char* split_pack<true>(const OperandView<double>&, const int*, bool, Fp64Split*, const PackedOperand&,
                                      const SplitKernels&, int);
template const char* split_pack<false>(const OperandView<double>&, const int*, bool, Fp64Split*, const PackedOperand&,
                                       const SplitKernels&, int);

}  // namespace amxblas::kernels

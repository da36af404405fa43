// The FP64 split + pack (pack.h): op(X) scaled by its row (column) exponents, gathered, split
// into the slices the speculated scales give, packed; and the fused scan + split + pack.
#include "kernels/pack/pack_fp64.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/reasons.h"
#include "kernels/pack/pack_blocks.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

// 2^e, exactly (e >= -1074).
inline double pow2(int e) {
    if (e >= -1022 && e <= 1023) {
        const std::uint64_t bits = std::uint64_t(e + 1023) << 52;
        double p;
        std::memcpy(&p, &bits, sizeof p);
        return p;
    }
    return std::ldexp(1.0, e);
}

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
                      const SplitKernels& sk, int threads, double* resid_max, double* norms, bool* subnormal,
                      ExponentScan* scan, const int* guess) {
    if (out.geom != kAmxGeometry)  // pack_generic.cc; scan_split_pack asks for no scan nor guess then
        return pack_fp64_generic(IsA, x, exps, sc, out, sk, threads, resid_max, norms, subnormal);
    if (norms) std::fill(norms, norms + std::size_t(sc.slices) * (IsA ? x.rows : x.cols), 0.0);
    const BlockOrder order = block_order<IsA>(x, out);
    const int outer = IsA ? x.rows : x.cols;
    const int participants = std::max(1, threads);
    // With guess: one partial per participant and panel (a panel packed again replaces its
    // own), and each participant's maxima of the rows' |x| patterns.
    PerParticipant<Fp64PackPartial>& part = guess_scratch().partials;
    part.assign(guess ? std::size_t(participants) * out.panels : std::size_t(participants), Fp64PackPartial{});
    std::vector<std::uint64_t>& rowmax = guess_scratch().rowmax;
    if (guess) rowmax.assign(std::size_t(participants) * outer, 0);
    const int* use_exps = guess ? guess : exps;
    const auto pack_block = [&](int p, int s, int who) {
        Fp64PackPartial& mine = part[guess ? std::size_t(who) * out.panels + p : std::size_t(who)];
        alignas(64) double tile[kStepElems];
        const int count = std::min(kTile, outer - p * kTile);
        BlockSource kind;
        const double* src = full_block<IsA>(x, p, s, &kind);
        std::uint64_t* mine_max = guess ? rowmax.data() + std::size_t(who) * outer + p * kTile : nullptr;
        if (guess && !src) {  // op(A) = A (guess_row_exponents): the block's rows lie in its columns
            const int l0 = s * kTile;
            sk.absbits_max_lanes(x.x + p * kTile + std::size_t(l0) * std::size_t(x.ld), std::size_t(x.ld),
                                 std::min(kTile, x.cols - l0), count, mine_max);
        }
        if (use_exps) {
            BlockScale bs;
            block_scale(use_exps, p * kTile, count, &bs);
            // A full block with guess (kind a_n): its rows' maxima taken as it is gathered.
            const bool sub = src && guess ? sk.gather_scale_rowmax_fp64(src, std::size_t(x.ld), bs, tile, mine_max)
                             : src        ? sk.gather_scale_fp64(kind, src, std::size_t(x.ld), IsA, bs, tile)
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
    };
    if (scan && !guess) {
        parallel_for(threads, out.panels, [&](int p, int who) {
            scan_panel(x, IsA, sk, p * kTile, std::min(kTile, outer - p * kTile), who, scan);
            for (int s = 0; s < out.ksteps; ++s) {
                if (s + 1 < out.ksteps) prefetch_block<IsA>(x, BlockOrder{out.panels, out.ksteps, false}, p * out.ksteps + s + 1);
                pack_block(p, s, who);
            }
        });
    } else {
        for_each_packed_block<IsA>(x, order, threads, [&](int q, int who) {
            int p, s;
            order.at(q, &p, &s);
            pack_block(p, s, who);
        });
    }
    if (guess) {
        // The rows' exponents from the maxima just taken; a panel with a row whose guess was
        // not its exponent is packed again with the exponents (its partials and norms first
        // cleared): then every block is the block the exponents give.
        for (int o = 0; o < outer; ++o) {
            std::uint64_t mo = rowmax[o];
            for (int w = 1; w < participants; ++w) mo = std::max(mo, rowmax[std::size_t(w) * outer + o]);
            scan->record(o, mo, 0);
        }
        std::vector<int>& again = guess_scratch().again;
        again.clear();
        if (!scan->bad())
            for (int p = 0; p < out.panels; ++p) {
                const int first = p * kTile, count = std::min(kTile, outer - first);
                if (!std::equal(exps + first, exps + first + count, guess + first)) again.push_back(p);
            }
        if (!again.empty()) {
            use_exps = exps;
            for (int p : again) {
                for (int w = 0; w < participants; ++w) part[std::size_t(w) * out.panels + p] = Fp64PackPartial{};
                const int first = p * kTile, count = std::min(kTile, outer - first);
                if (norms)
                    for (int t = 0; t < sc.slices; ++t) std::fill_n(norms + std::size_t(t) * outer + first, count, 0.0);
            }
            parallel_for(threads, int(again.size()) * out.ksteps,
                         [&](int q, int who) { pack_block(again[q / out.ksteps], q % out.ksteps, who); });
        }
    }
    return fold_fp64_partials(part, resid_max, subnormal);
}

template <bool IsA>
const char* split_pack(const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                       const PackedOperand& out, const SplitKernels& sk, int threads, ExponentScan* scan,
                       const int* exp_guess) {
    // With scan, op(X) is taken to be nonzero until the first pack has scanned it.
    const auto pack_all = [&](const Fp64Scales& guess) -> SpeculatedPack {
        SpeculatedPack r;
        r.why = pack_fp64<IsA>(x, exps, guess, out, sk, threads, sp->resid, sp->norms, &sp->subnormal_scaled, scan,
                               exp_guess);
        if (scan) {
            if (scan->bad()) r.nonfinite = true;
            r.all_zero = !scan->any();
            scan = nullptr;
            exp_guess = nullptr;
        }
        return r;
    };
    return speculate_scales(scan ? true : nonzero, out.slices, sp, pack_all);
}

// Both operands' instances, for the tests' reference entry points (pack_fp64.h).
template const char* pack_fp64<true>(const OperandView<double>&, const int*, const Fp64Scales&, const PackedOperand&,
                                     const SplitKernels&, int, double*, double*, bool*, ExponentScan*, const int*);
template const char* pack_fp64<false>(const OperandView<double>&, const int*, const Fp64Scales&, const PackedOperand&,
                                      const SplitKernels&, int, double*, double*, bool*, ExponentScan*, const int*);
template const char* split_pack<true>(const OperandView<double>&, const int*, bool, Fp64Split*, const PackedOperand&,
                                      const SplitKernels&, int, ExponentScan*, const int*);
template const char* split_pack<false>(const OperandView<double>&, const int*, bool, Fp64Split*, const PackedOperand&,
                                       const SplitKernels&, int, ExponentScan*, const int*);

namespace {

template <bool IsA>
const char* scan_split_pack(const OperandView<double>& x, int* exps, unsigned char* zero, bool* nonzero, Fp64Split* sp,
                            const PackedOperand& out, const SplitKernels& sk, int threads) {
    // Fused only where the pack walks the panels one after another anyway (op(A) stored by
    // rows, op(B) by columns: each panel is 32 contiguous runs); elsewhere a panel's blocks lie
    // across the columns of all of op(X), and taking them panel by panel costs more in pages
    // than the second read saves.
    // The scan and the guessed exponents run inside the fast path only (kAmxGeometry); the
    // generic pack (pack_generic.cc) takes the two calls.
    const bool fast = out.geom == kAmxGeometry;
    if (x.kind != Interleave::real || (x.trans == 'N') == IsA || !fast) {
        if (IsA && x.kind == Interleave::real && fast) {
            std::vector<int>& guess = guess_scratch().guess;
            if (guess_row_exponents(x, sk, threads, &guess)) {
                ExponentScan scan(exps, zero, threads);
                const char* why = split_pack<IsA>(x, exps, true, sp, out, sk, threads, &scan, guess.data());
                *nonzero = scan.any();
                return scan.bad() ? reason::domain_nonfinite : why;
            }
        }
        if (const char* why = fp64_outer_exponents(x, IsA, threads, exps, nonzero, zero)) return why;
        return split_pack<IsA>(x, exps, *nonzero, sp, out, sk, threads);
    }
    ExponentScan scan(exps, zero, threads);
    const char* why = split_pack<IsA>(x, exps, true, sp, out, sk, threads, &scan);
    *nonzero = scan.any();
    return scan.bad() ? reason::domain_nonfinite : why;
}

}  // namespace

const char* scan_split_pack_a_fp64(const OperandView<double>& a, int* row_exps, unsigned char* zero, bool* nonzero,
                                   Fp64Split* sp, const PackedOperand& out, const SplitKernels& sk, int threads) {
    return scan_split_pack<true>(a, row_exps, zero, nonzero, sp, out, sk, threads);
}

const char* scan_split_pack_b_fp64(const OperandView<double>& b, int* col_exps, unsigned char* zero, bool* nonzero,
                                   Fp64Split* sp, const PackedOperand& out, const SplitKernels& sk, int threads) {
    return scan_split_pack<false>(b, col_exps, zero, nonzero, sp, out, sk, threads);
}

}  // namespace amxblas::kernels

// How a routed call is cut into chunks, as plain arithmetic: the driver sizes its workspace and
// walks the chunks with it (kernels/bf16/chunking.h says how and why), and the policy's cost
// model counts with it how often the operands are split (policy/cost_model.cc), so the two
// agree.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace amxblas::kernels {

// The micro-kernel set's tile and K step (TileGeometry, kernels/isa/microkernel.h) and the
// call's output blocks (Blocking, kernels/bf16/chunking.h).
struct ChunkShape {
    int mr, nr, kstep;
    int bm, bn;
};

struct Chunking {
    int mc, nc, kc;  // super-block rows and columns, K chunk depth
    // K is one chunk: each block is done in one go, so each thread needs one accumulator, not
    // each block of the super-block one that lives across the K chunks.
    bool thread_acc = false;
};

// The chunk buffers, accumulators and per-thread tiles together stay under this (the call's
// per-row and per-column facts come on top: O(M + N)); with the library's own memory and the
// workspace's rounding to 2 MiB pages, a routed call's peak extra memory stays under 64 MiB.
constexpr std::size_t kChunkBudgetBytes = std::size_t(48) << 20;
// K per chunk: one BK panel (kBlockK). A deeper chunk would only shrink MC and NC; K chunks cost
// no second split.
constexpr int kChunkDepth = 256;
constexpr std::size_t kChunkAlign = 64;
// Between two slice buffers of one operand: without it, slices of a large power-of-two size lie
// a multiple of 4 KiB apart, so the blocks a micro-tile reads from its six (FP32) or twelve
// (FP64) buffers at one K step all fall into the same L1 and L2 cache sets and alias at 4 KiB.
// 4096 + 64 bytes moves each buffer one L1 set and 65 L2 sets further than the one before.
constexpr std::size_t kSliceStagger = 4096 + 64;

inline std::size_t chunk_align(std::size_t x) { return (x + kChunkAlign - 1) / kChunkAlign * kChunkAlign; }
inline std::int64_t chunk_round(std::int64_t x, std::int64_t step) { return (x + step - 1) / step * step; }

// One slice buffer of `outer` rows (columns) by k, padded to tiles and K steps, and its stagger.
inline std::size_t chunk_slice_stride(int outer, int k, int tile, int kstep) {
    return chunk_align(std::size_t(chunk_round(outer, tile)) * std::size_t(chunk_round(k, kstep)) * 2) + kSliceStagger;
}

// Accumulator slots: one per block of a super-block, or one per thread (thread_acc).
inline std::size_t chunk_acc_slots(const ChunkShape& s, const Chunking& c, int threads) {
    if (c.thread_acc) return std::size_t(std::max(threads, 1));
    return std::size_t((c.mc + s.bm - 1) / s.bm) * std::size_t((c.nc + s.bn - 1) / s.bn);
}

// The workspace of a call cut into chunks c: `slices` slice buffers of each operand's chunk,
// the accumulator slots (bm rows of a 256-wide block row, acc_size bytes a value), and per
// thread the micro-tiles (`tiles` mr x nr FP32 tiles).
inline std::size_t chunk_bytes(const ChunkShape& s, const Chunking& c, int slices, std::size_t acc_size, int threads,
                               int tiles) {
    const std::size_t slots = chunk_acc_slots(s, c, threads);
    return std::size_t(slices) * (chunk_slice_stride(c.mc, c.kc, s.mr, s.kstep) + chunk_slice_stride(c.nc, c.kc, s.nr, s.kstep)) +
           slots * chunk_align(std::size_t(s.bm) * 256 * acc_size) +
           std::size_t(std::max(threads, 1)) * chunk_align(std::size_t(tiles) * s.mr * s.nr * 4);
}

// The threads whose own parts (micro-tiles, and with K in one chunk an accumulator, up to about
// 0.5 MiB each) count against the budget; those of more threads come on top, as their stacks
// do. Counting every thread left nothing that fit on a many-core machine: at 112 threads a
// 30000 x 30000 x 256 FP64-21 DGEMM (an HPL update) fell to 256 x 256 super-blocks, each
// operand split 118 times (7680 x 7936 now, as at 4 threads), and its workspace still passed
// the budget (61 MiB).
constexpr int kBudgetThreads = 4;

// The chunking of an m x n x k call. When the whole call fits the budget it is one chunk (no
// operand is split twice); with K in one chunk that is a matter of the operands alone, whatever
// the size of C (an HPL update, K = 256, of any M and N up to about 12,000). Otherwise KC = BK,
// and of the super-blocks MC x NC (whole blocks) that fit, the one that splits the least: op(A)
// is split once per super-block column and op(B) once per row, so the work is
// ceil(n / NC) m + ceil(m / MC) n (ties: the larger). The search stops at the first MC with no
// room for one block column: at most some hundreds of MC, a binary search over NC each. A chunk
// that covers a whole dimension is cut down to the call's size, rounded up to tiles and K steps.
// `budget`: the driver's; the benchmark asks for a larger one to model whole-operand splits.
inline Chunking plan_chunks(const ChunkShape& s, int m, int n, int k, int slices, std::size_t acc_size, int threads,
                            int tiles, std::size_t budget = kChunkBudgetBytes) {
    const int mfit = int(chunk_round(m, s.mr)), nfit = int(chunk_round(n, s.nr)), kfit = int(chunk_round(k, s.kstep));
    const int kc = std::min(kfit, kChunkDepth);
    const auto bytes = [&](int mc, int nc, int kd) {
        return chunk_bytes(s, {mc, nc, kd, kd >= k}, slices, acc_size, std::min(threads, kBudgetThreads), tiles);
    };
    if (bytes(mfit, nfit, kfit) <= budget) return {mfit, nfit, kfit, true};
    const std::int64_t mmax = chunk_round(m, s.bm), nmax = chunk_round(n, s.bn);
    Chunking best{s.bm, s.bn, kc, kc >= k};
    double best_work = -1;
    for (std::int64_t mc = s.bm; mc <= mmax; mc += s.bm) {
        // The widest NC that fits with this MC (the bytes grow with NC): a binary search in blocks.
        std::int64_t lo = 0, hi = nmax / s.bn;  // lo block columns fit (0: none); hi: at most
        while (lo < hi) {
            const std::int64_t mid = (lo + hi + 1) / 2;
            if (bytes(int(mc), int(mid * s.bn), kc) <= budget) lo = mid;
            else hi = mid - 1;
        }
        if (lo == 0) break;  // not even one block column: a taller MC fits no better
        const std::int64_t nc = lo * s.bn;
        const double work = std::ceil(double(n) / double(nc)) * m + std::ceil(double(m) / double(mc)) * n;
        if (best_work < 0 || work < best_work || (work == best_work && mc * nc > std::int64_t(best.mc) * best.nc)) {
            best = {int(mc), int(nc), kc, kc >= k};
            best_work = work;
        }
    }
    if (best.mc >= m) best.mc = mfit;
    if (best.nc >= n) best.nc = nfit;
    return best;
}

}  // namespace amxblas::kernels

// How a routed call is cut so that its workspace does not grow with the problem (internal: the
// macro-kernel and the drivers).
//
// The output is walked in super-blocks of MC x NC entries and K in chunks of KC (GotoBLAS's
// loops around the macro-kernel, Goto and van de Geijn, ACM TOMS 34(3), 2008). For one
// super-block and one K chunk the driver splits and packs just op(A)'s MC x KC and op(B)'s
// KC x NC into the chunk buffers, and adds that chunk's panels to the super-block's
// accumulators, which persist over the K chunks. The workspace is therefore two chunk buffers
// and one MC x NC accumulator, whatever M, N and K are.
//
// KC is a multiple of BK, and MC and NC of BM and BN: the chunks cut K at panel boundaries and
// the output at block boundaries, so every entry still adds the same exact panel sums in the
// same order (macro_kernel.h) and the results are the same bits as one chunk would give. A call
// whose whole operands fit the budget is one chunk (kernels/common/chunk_plan.h, plan_chunks).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/chunk_plan.h"
#include "kernels/common/gemm_types.h"
#include "kernels/isa/microkernel.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// The output blocks of a call: BM x BN = kBlockM x kBlockN (bm x bn), halved in both
// directions, down to 64 x 64, while the call has fewer than 8 blocks per thread. The blocks
// are handed out one at a time, so a thread that runs slower (its core shared with another
// process, or with the real BLAS's spinning threads) takes fewer of them, and the last round
// leaves at most one block's time idle; with only a few large blocks neither holds: an N = 256
// call was one block, so its block loop ran on one thread, and an N = 768 call 9 blocks for 2
// threads. With 8 per thread rather than 4, N = 384 and 768 ran 9-12% faster on 2 threads
// (both go from 9 blocks to 36; calls back to back in fresh processes, the two builds
// alternating, 5 rounds, OPENBLAS_THREAD_TIMEOUT=4 so that OpenBLAS's threads do not spin),
// and N = 256, 512 and 1024 keep their blocks. The block size changes neither the products nor
// the order in which each entry's panels are added (every micro-tile adds its panels in
// order into its own part of the accumulator), so the results are the same bits.
struct Blocking {
    TileGeometry g;
    int bm, bn;                   // the block: rows and columns
    int mtiles, ntiles, ksteps;   // in mr, nr and kstep units, after padding
    int tiles_m, tiles_n, steps;  // per block and panel: bm / mr, bn / nr, BK / kstep
    int mblocks, nblocks, panels;
    Blocking(const TileGeometry& geom, int m, int n, int k, int threads)
        : g(geom), bm(kBlockM), bn(kBlockN), mtiles(round_up(m, g.mr) / g.mr), ntiles(round_up(n, g.nr) / g.nr),
          ksteps(round_up(k, g.kstep) / g.kstep), steps(kBlockK / g.kstep), panels((ksteps + steps - 1) / steps) {
        const auto blocks = [&](int r, int c) { return std::int64_t((m + r - 1) / r) * ((n + c - 1) / c); };
        while (threads > 1 && blocks(bm, bn) < 8 * std::int64_t(threads) && bm / 2 >= 64 && bn / 2 >= 64 &&
               (bm / 2) % g.mr == 0 && (bn / 2) % g.nr == 0) {
            bm /= 2;
            bn /= 2;
        }
        tiles_m = bm / g.mr;
        tiles_n = bn / g.nr;
        mblocks = (mtiles + tiles_m - 1) / tiles_m;
        nblocks = (ntiles + tiles_n - 1) / tiles_n;
    }
};

// The ChunkShape of a call cut into bl's blocks (kernels/common/chunk_plan.h).
inline ChunkShape chunk_shape(const Blocking& bl) { return {bl.g.mr, bl.g.nr, bl.g.kstep, bl.bm, bl.bn}; }

// The micro-tiles each thread keeps: one for FP32, kWidenBatch (8) for FP64 (acc_size 8).
inline int tiles_per_thread(std::size_t acc_size) { return acc_size == sizeof(double) ? 8 : 1; }

// plan_chunks for the call (kernels/common/chunk_plan.h).
inline Chunking choose_chunking(const Blocking& bl, int m, int n, int k, int slices, std::size_t acc_size, int threads) {
    return plan_chunks(chunk_shape(bl), m, n, k, slices, acc_size, threads, tiles_per_thread(acc_size));
}

// True when c holds the whole call: one chunk, split once.
inline bool single_chunk(const Chunking& c, int m, int n, int k) { return c.mc >= m && c.nc >= n && c.kc >= k; }
// True when c's super-block is all of C (K may still come in several chunks).
inline bool one_super_block(const Chunking& c, int m, int n) { return c.mc >= m && c.nc >= n; }

// choose_chunking, made smaller where opt asks (RunOptions::chunk_rows, chunk_cols, chunk_depth).
Chunking chunking_for(const Blocking& bl, int m, int n, int k, int slices, std::size_t acc_size, int threads,
                      const RunOptions& opt);

// op(X)(r0 .. r0 + rows - 1, c0 .. c0 + cols - 1) as a view of its own. For complex views r0
// and c0 are in op(X')'s units and even where they count parts of one complex entry (the K
// index of both, the columns of op(B')); the packers then gather the sub-view exactly as they
// gather that part of the whole one.
template <typename T>
OperandView<T> sub_view(const OperandView<T>& v, int r0, int rows, int c0, int cols) {
    OperandView<T> s = v;
    s.rows = rows;
    s.cols = cols;
    std::int64_t r = r0, c = c0, scale = 1;
    if (v.kind == Interleave::complex_a) {
        c /= 2;
        scale = 2;
    } else if (v.kind == Interleave::complex_b) {
        r /= 2;
        c /= 2;
        scale = 2;
    }
    const std::int64_t first = v.trans == 'N' ? r + c * v.ld : c + r * v.ld;
    s.x = v.x + scale * first;
    return s;
}

}  // namespace amxblas::kernels

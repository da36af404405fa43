// The macro-kernel both precisions run (internal: fp32_gemm.cc, fp64_gemm.cc): the call's
// backend and micro-kernels, its blocking, the block walk on the pool's threads, run_blocks.
//
// The blocked driver (paper Sections 6.1-6.3, kernels/driver/blocked_gemm.h), under the SGEMM and
// DGEMM entry points (real_gemm.cc) and CGEMM and ZGEMM (complex_gemm.cc):
//
//   for each BM x BN output block (handed out one at a time to the threads: kernels/runtime/thread_pool.h;
//                                  smaller blocks when a call has too few: Blocking)
//     for each BK panel
//       for each mr x nr micro-tile (the micro-kernel set's geometry, microkernel.h)
//         FP32: one fused six-product chain -> tile; block accumulator (FP32) += tile
//         FP64: for each product (i, j), i + j < d, smallest first (index sum descending):
//               one product -> tile; block accumulator (FP64) += widen(tile) * 2^(vA_i + vB_j)
//     FP64: accumulator *= 2^(e_i + f_j) (Step::finish); then the caller's writer:
//     C := alpha * accumulator + beta * C   (beta == 0: C is not read)
//
// One macro-kernel (run_blocks) walks the blocks, panels and tiles for both precisions; the
// per-precision step (Fp32Step, fp32_gemm.cc; Fp64Step, fp64_gemm.cc) says what one micro-tile
// of one panel adds to the block accumulator.
//
// Why BK = 256 makes the FP64 path exact before widening: a normalised slice entry (pack.h,
// split.h) is a multiple of 2^-8 of magnitude <= 1, so a product of two is a multiple of
// 2^-16 of magnitude <= 1, and any partial sum of 256 of them is an integer multiple of 2^-16
// no larger than 2^24 units: exactly representable in FP32, and never below 2^-16 unless zero,
// so nothing is flushed. Every per-panel FP32 result is the exact real sum, so backends, pair
// orders and thread counts cannot change a single bit; the power-of-two factors are exact too
// (barring FP64 underflow below 2^-1022, which docs/fp64-certificate.md counts).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "kernels/common/reasons.h"
#include "kernels/driver/blocked_gemm.h"
#include "kernels/driver/workspace_layout.h"
#include "kernels/isa/backend.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

inline const char* check_backend(const RunOptions& opt) {
    if (!backend_built(opt.backend)) return reason::backend_not_built;
    if (!backend_usable(opt.backend, opt.amx_emulator)) return reason::backend_not_runnable;
    return nullptr;
}

// The call's micro-kernel set: the backend's, or the caller's own (RunOptions::microkernels).
inline MicroKernels kernels_for(const RunOptions& opt) {
    return opt.microkernels ? *opt.microkernels : microkernels_for(opt.backend);
}

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

inline double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Time spent in reconstruction, summed over the threads, when the caller asked for phase times
// (two clock reads per micro-tile, panel and widen batch: negligible beside the products, but
// counted in what it measures: a steady_clock read cost about 45 ns on the machine of
// docs/bench, against some 500 ns for a batch of 7 FP64 widen-adds, so reconstruct_s runs
// 5-10% high there).
struct ReconClock {
    bool on = false;
    std::atomic<long long> ns{0};
    template <typename F>
    void time(F&& f) {
        if (!on) return f();
        const auto t0 = std::chrono::steady_clock::now();
        f();
        ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
                     std::memory_order_relaxed);
    }
    // Per-thread seconds, averaged over the threads that can take part.
    double seconds(int threads, int blocks) const { return 1e-9 * double(ns.load()) / std::min(threads, blocks); }
};

// Runs block(ib, jb, acc, tile) over every output block on up to `threads` threads. Each thread
// has its own accumulator and tile in `scratch` and brackets its blocks with the micro-kernels'
// thread_begin/thread_end (tile configuration on AMX), only if it gets a block at all.
template <typename Acc, typename Block>
void for_each_block(int threads, const Blocking& bl, char* scratch, const MicroKernels& mk, Block&& block) {
    struct Task final : ParallelTask {
        const Blocking& bl;
        char* scratch;
        const MicroKernels& mk;
        Block& block;
        std::atomic<int> next{0};
        Task(const Blocking& b, char* s, const MicroKernels& m, Block& f) : bl(b), scratch(s), mk(m), block(f) {}
        void run(int participant) override {
            char* mine = scratch + thread_scratch_bytes<Acc>(bl.g) * participant;
            Acc* acc = reinterpret_cast<Acc*>(mine);
            float* tile = reinterpret_cast<float*>(mine + align_up(std::size_t(kBlockM) * kBlockN * sizeof(Acc)));
            bool begun = false;
            for (int q; (q = next.fetch_add(1, std::memory_order_relaxed)) < bl.mblocks * bl.nblocks;) {
                if (!begun) mk.thread_begin();
                begun = true;
                block(q / bl.nblocks, q % bl.nblocks, acc, tile);
            }
            if (begun) mk.thread_end();
        }
    };
    Task task(bl, scratch, mk, block);
    run_parallel(std::min(threads, bl.mblocks * bl.nblocks), task);
}

// The macro-kernel of both precisions, on for_each_block's threads, for op(A) (m x k) times
// op(B) (k x n). Per block, Step::begin_block prepares the accumulator's rows x cols valid
// part; per panel and micro-tile, Step::tile adds that panel's contribution (or, on the first
// panel, may store it); Step::finish may rescale the
// block's valid part, and the block goes to the caller's writer.
//   struct Step {
//       using Acc = ...;  // float or double, the type of the block accumulator and of C
//       void begin_block(Acc* acc, int rows, int cols) const;
//       void tile(const MicroKernels& mk, int panel, int ksteps, int pi, int pj, int s0,
//                 Acc* dst, float* tile) const;  // dst: the tile's corner, row stride kBlockN;
//                                                // tile: mr x nr scratch (kWidenBatch for FP64)
//       void finish(int i0, int j0, Acc* acc, int rows, int cols) const;  // before the writer
//   };
template <typename Step>
void run_blocks(int m, int n, int k, const Step& step, const MicroKernels& mk, char* scratch, int threads,
                const BlockWriter<typename Step::Acc>& write) {
    using Acc = typename Step::Acc;
    const TileGeometry& g = mk.geometry;
    const Blocking bl(g, m, n, k, threads);
    for_each_block<Acc>(threads, bl, scratch, mk, [&](int ib, int jb, Acc* acc, float* tile) {
        const int ti_end = std::min(bl.tiles_m, bl.mtiles - ib * bl.tiles_m);
        const int tj_end = std::min(bl.tiles_n, bl.ntiles - jb * bl.tiles_n);
        step.begin_block(acc, ti_end * g.mr, tj_end * g.nr);
        for (int kb = 0; kb < bl.panels; ++kb) {
            const int s0 = kb * bl.steps, ns = std::min(bl.steps, bl.ksteps - s0);
            for (int ti = 0; ti < ti_end; ++ti)
                for (int tj = 0; tj < tj_end; ++tj) {
                    const int pi = ib * bl.tiles_m + ti, pj = jb * bl.tiles_n + tj;
                    step.tile(mk, kb, ns, pi, pj, s0, acc + ti * g.mr * kBlockN + tj * g.nr, tile);
                }
        }
        const int i0 = ib * bl.bm, j0 = jb * bl.bn, rows = std::min(bl.bm, m - i0), cols = std::min(bl.bn, n - j0);
        step.finish(i0, j0, acc, rows, cols);
        write(i0, j0, rows, cols, acc);
    });
}

}  // namespace amxblas::kernels

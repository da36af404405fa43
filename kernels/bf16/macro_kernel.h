// The macro-kernel both precisions run (internal: fp32_gemm.cc, fp64_gemm.cc): the call's
// backend and micro-kernels, the block walk on the pool's threads, run_chunks.
//
// The blocked driver (paper Sections 6.1-6.3, kernels/bf16/blocked_gemm.h), under the SGEMM and
// DGEMM entry points (real_gemm.cc) and CGEMM and ZGEMM (complex_gemm.cc), in bounded memory
// (chunking.h):
//
//   for each MC x NC super-block of C
//     for each KC chunk of K
//       split and pack op(A)'s MC x KC and op(B)'s KC x NC chunks (on the pool's threads)
//       for each BM x BN output block of the super-block (handed out one at a time to the
//                                  threads: kernels/runtime/thread_pool.h; smaller blocks when
//                                  a call has too few: Blocking)
//         for each BK panel of the chunk
//           for each mr x nr micro-tile (the micro-kernel set's geometry, microkernel.h)
//             FP32: one fused six-product chain -> tile; block accumulator (FP32) += tile
//             FP64: for each product (i, j), i + j < d, smallest first (index sum descending):
//                   one product -> tile; block accumulator (FP64) += widen(tile) * 2^(vA_i + vB_j)
//         after the last chunk: FP64: accumulator *= 2^(e_i + f_j) (Step::finish); then the
//         caller's writer: C := alpha * accumulator + beta * C   (beta == 0: C is not read)
//
// One macro-kernel (run_chunks) walks the chunks, blocks, panels and tiles for both precisions;
// the per-precision step (Fp32Step, fp32_gemm.cc; Fp64Step, fp64_gemm.cc) says what one
// micro-tile of one panel adds to the block accumulator. Each entry's accumulator sees the
// panels in K order whatever the chunks, so chunking changes no bit.
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
#include "kernels/bf16/blocked_gemm.h"
#include "kernels/bf16/chunking.h"
#include "kernels/bf16/workspace_layout.h"
#include "kernels/engine/guard.h"
#include "kernels/isa/backend.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

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

// Runs block(q, participant, tile) for q in [0, count) on up to `threads` threads, each with its own
// micro-tiles (ws.tiles) and bracketing its blocks with the micro-kernels'
// thread_begin/thread_end (tile configuration on AMX), only if it gets a block at all.
template <typename Block>
void for_each_block(int threads, int count, const CallWorkspace& ws, const MicroKernels& mk, Block&& block) {
    struct Task final : ParallelTask {
        int count;
        const CallWorkspace& ws;
        const MicroKernels& mk;
        Block& block;
        std::atomic<int> next{0};
        Task(int c, const CallWorkspace& w, const MicroKernels& m, Block& f) : count(c), ws(w), mk(m), block(f) {}
        void run(int participant) override {
            float* tile = reinterpret_cast<float*>(ws.tiles + ws.tile_bytes * participant);
            bool begun = false;
            for (int q; (q = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
                if (!begun) mk.thread_begin();
                begun = true;
                block(q, participant, tile);
            }
            if (begun) mk.thread_end();
        }
    };
    Task task(count, ws, mk, block);
    run_parallel(std::min(threads, count), task);
}

// The macro-kernel of both precisions for op(A) (m x k) times op(B) (k x n), chunk by chunk
// (chunking.h): per super-block of ch.mc x ch.nc and K chunk of ch.kc, the chunks of op(A) and
// op(B) are packed into ws.pa and ws.pb (a chunk still there from the step before is kept),
// then the super-block's blocks run on for_each_block's threads, each into its own
// accumulator slot. Per block, Step::begin_block prepares the accumulator's rows x cols valid
// part before the first chunk; per panel and micro-tile, Step::tile adds that panel's
// contribution (or, on the call's first panel, may store it); after the last chunk
// Step::finish may rescale the block's valid part, and the block goes to the caller's writer.
//   struct Step {
//       using Acc = ...;  // float or double, the type of the block accumulator and of C
//       void begin_block(Acc* acc, int rows, int cols) const;
//       void tile(const MicroKernels& mk, int panel, int ksteps, int pi, int pj, int s0,
//                 Acc* dst, float* tile) const;  // panel: of the call; pi, pj, s0: of the
//                                                // chunk buffers; dst: the tile's corner, row
//                                                // stride kBlockN; tile: mr x nr scratch
//                                                // (kWidenBatch for FP64)
//       void finish(int i0, int j0, Acc* acc, int rows, int cols) const;  // before the writer
//   };
// pack_a(o0, outer, k0, kc, out) packs op(A)'s rows o0 .. o0 + outer - 1, K k0 .. k0 + kc - 1,
// into `out`, already shaped for it (shape_chunk); pack_b the same for op(B)'s columns. They
// run on the calling thread and use the pool themselves. (Templates, not std::function: a
// warm call allocates nothing for them.)
struct ChunkWalk {
    // The call is one chunk (single_chunk) and ws.pa and ws.pb already hold it, shaped: nothing
    // is packed.
    bool prepacked = false;
    // The call is one super-block (one_super_block): its blocks stay in their accumulators,
    // unfinished and unwritten, until write_held.
    bool hold = false;
};
template <typename Step, typename PackA, typename PackB>
void run_chunks(int m, int n, int k, const Step& step, CallWorkspace& ws, const PackA& pack_a, const PackB& pack_b,
                const MicroKernels& mk, const Blocking& bl, const Chunking& ch, int threads,
                const BlockWriter<typename Step::Acc>& write, ChunkWalk walk = {}) {
    using Acc = typename Step::Acc;
    const TileGeometry& g = mk.geometry;
    const int at0 = walk.prepacked ? 0 : -1;
    int a_at[2] = {at0, at0}, b_at[2] = {at0, at0};  // the chunks in the buffers: (o0, k0)
    for (int i0 = 0; i0 < m; i0 += ch.mc)
        for (int j0 = 0; j0 < n; j0 += ch.nc) {
            const int mc = std::min(ch.mc, m - i0), nc = std::min(ch.nc, n - j0);
            const int mb = (mc + bl.bm - 1) / bl.bm, nb = (nc + bl.bn - 1) / bl.bn;
            for (int k0 = 0; k0 < k; k0 += ch.kc) {
                const int kc = std::min(ch.kc, k - k0);
                if (a_at[0] != i0 || a_at[1] != k0) {
                    shape_chunk(&ws.pa, true, mc, kc);
                    pack_a(i0, mc, k0, kc, ws.pa);
                    a_at[0] = i0;
                    a_at[1] = k0;
                }
                if (b_at[0] != j0 || b_at[1] != k0) {
                    shape_chunk(&ws.pb, false, nc, kc);
                    pack_b(j0, nc, k0, kc, ws.pb);
                    b_at[0] = j0;
                    b_at[1] = k0;
                }
                const int ksteps = ws.pa.ksteps, panels = (ksteps + bl.steps - 1) / bl.steps;
                const int first_panel = k0 / kBlockK;
                const bool last = k0 + kc >= k;
                const int mtiles = ws.pa.panels, ntiles = ws.pb.panels;
                for_each_block(threads, mb * nb, ws, mk, [&](int q, int participant, float* tile) {
                    const int ib = q / nb, jb = q % nb;
                    Acc* acc = reinterpret_cast<Acc*>(ws.acc + ws.acc_slot * (ch.thread_acc ? participant : q));
                    const int ti_end = std::min(bl.tiles_m, mtiles - ib * bl.tiles_m);
                    const int tj_end = std::min(bl.tiles_n, ntiles - jb * bl.tiles_n);
                    if (k0 == 0) step.begin_block(acc, ti_end * g.mr, tj_end * g.nr);
                    for (int kb = 0; kb < panels; ++kb) {
                        const int s0 = kb * bl.steps, ns = std::min(bl.steps, ksteps - s0);
                        for (int ti = 0; ti < ti_end; ++ti)
                            for (int tj = 0; tj < tj_end; ++tj)
                                step.tile(mk, first_panel + kb, ns, ib * bl.tiles_m + ti, jb * bl.tiles_n + tj, s0,
                                          acc + ti * g.mr * kBlockN + tj * g.nr, tile);
                    }
                    if (!last || walk.hold) return;
                    const int bi = i0 + ib * bl.bm, bj = j0 + jb * bl.bn;
                    const int rows = std::min(bl.bm, m - bi), cols = std::min(bl.bn, n - bj);
                    step.finish(bi, bj, acc, rows, cols);
                    write(bi, bj, rows, cols, acc);
                });
            }
        }
}

// After run_chunks with hold: finishes and writes the blocks of the call's one super-block.
template <typename Step>
void write_held(int m, int n, const Step& step, const CallWorkspace& ws, const Blocking& bl, int threads,
                const BlockWriter<typename Step::Acc>& write) {
    using Acc = typename Step::Acc;
    const int mb = (m + bl.bm - 1) / bl.bm, nb = (n + bl.bn - 1) / bl.bn;
    parallel_for(threads, mb * nb, [&](int q, int) {
        Acc* acc = reinterpret_cast<Acc*>(ws.acc + ws.acc_slot * q);
        const int bi = (q / nb) * bl.bm, bj = (q % nb) * bl.bn;
        const int rows = std::min(bl.bm, m - bi), cols = std::min(bl.bn, n - bj);
        step.finish(bi, bj, acc, rows, cols);
        write(bi, bj, rows, cols, acc);
    });
}

}  // namespace amxblas::kernels

// The INT8 engine's macro-kernel (internal: int8_gemm.cc): op(A) (m x k) times op(B) (k x n)
// as `layers` INT8 products at once (one per modulus, or one of magnitudes), in bounded memory
// (kernels/common/int8_chunk_plan.h).
//
//   for each MC x NC super-block of C
//     for each KC chunk of K
//       pack op(A)'s MC x KC and op(B)'s KC x NC chunk, one buffer per layer (int8_pack.h);
//       with K in one chunk, op(A)'s chunk once per row of super-blocks (int8_a_packs)
//       for each 128 x 128 group of micro-tiles (handed out one at a time to the threads)
//         for each layer and micro-tile
//           for each panel of at most 2048 K values: product_s8 -> tile; sum (+)= tile  (INT32)
//           fold(layer, ti, tj, sum, first chunk, last chunk, participant)   the caller's accumulator
//                                                                    takes the chunk
//         group_done(the group's rows and columns, last chunk, participant)
//     finish(i0, j0, rows, cols)
//
// A group's tiles go to one participant, in the order above. The layers are a group's outer
// loop, so that each packed panel is read from L2 by the four tiles
// that use it while it is there. On the last K chunk a group's accumulators are final at
// group_done: the residue pass reconstructs the group then, from its participant's slot, and
// the certificate's pass with K in one chunk tests it.
// A chunk's INT32 sums are exact: at most KC 2^14 <= 2^26. The caller folds them into what it
// keeps across chunks (the residues, or exact FP64 sums), so no INT32 value grows with K.
// Every product is exact, so neither the chunks, nor the threads, nor the backend change a bit.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "kernels/common/int8_chunk_plan.h"
#include "kernels/int8/int8_pack.h"
#include "kernels/isa/microkernel.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

// K steps per micro-kernel call: 2048 K values, so that a chunk of up to 2048 is one call per
// tile and layer, and the deepest chunk (kInt8MaxChunkDepth = 4096) two, the second adding into
// the first's INT32 tile; well inside the kernels' exact range (kInt8MaxPanelDepth = 2^16).
constexpr int kInt8PanelSteps = 32;
constexpr int kInt8GroupTiles = 4;   // 4 x 4 micro-tiles per task
static_assert(kInt8GroupTiles * kInt8Tile == kInt8GroupSide, "int8_chunk_plan.h counts a group's residues");
constexpr int kInt8TileValues = kInt8Tile * kInt8Tile;
constexpr std::size_t kInt8BlockBytes = std::size_t(kInt8Tile) * kInt8Kstep;  // one packed block, A or B
static_assert(kInt8Kstep == kAmxInt8Geometry.kstep && kInt8Tile == kAmxInt8Geometry.mr &&
                  kInt8Tile == kAmxInt8Geometry.nr,
              "kernels/common/int8_chunk_plan.h counts with the INT8 geometry");

struct Int8Chunking {
    int mc = 0, nc = 0, kc = 0;  // multiples of 32, 32 and 64 (or the whole padded extent)
    int layers = 0;
    bool sums = false;       // the certificate's pass: FP64 sums, not residues
    bool one_chunk = false;  // kc covers K: nothing kept across chunks (int8_chunk_plan.h)
};

// One call's buffers, carved from one workspace lease.
struct Int8Buffers {
    std::int8_t* a[kInt8MaxModuli] = {};
    std::int8_t* b[kInt8MaxModuli] = {};
    // The residues kept across K chunks: layer l at res + l * layer, row-major, row stride ld.
    std::int8_t* res = nullptr;
    double* sums = nullptr;  // or the certificate's FP64 sums, row-major, row stride ld
    std::size_t layer = 0;
    int ld = 0;
    std::int32_t* tiles = nullptr;  // two 32 x 32 tiles per participant: the kernel's and the sum
    double* blocks = nullptr;       // per participant an output slot (int8_out_slot_bytes): a
    std::size_t slot = 0;           // kBlockM x kBlockN block; slot: doubles from one to the next
    // The residues of participant p's group on the last K chunk (the residue pass): layer l,
    // row r, column c at [l * kInt8GroupSide^2 + r * kInt8GroupSide + c], after the group's
    // rows of output.
    std::int8_t* group_residues(int p) const {
        return reinterpret_cast<std::int8_t*>(blocks + std::size_t(p) * slot + std::size_t(kInt8GroupSide) * kInt8OutBlock);
    }
};

// The chunking of a call (kernels/common/int8_chunk_plan.h's) and its bytes for `threads`.
Int8Chunking int8_chunking(int m, int n, int k, int layers, bool sums, int threads);
std::size_t int8_workspace_bytes(const Int8Chunking& ch, int threads);
// Carves buffers for ch out of p (int8_workspace_bytes(ch, threads) bytes).
Int8Buffers int8_buffers(void* p, const Int8Chunking& ch, int threads);

template <typename PackA, typename PackB, typename Fold, typename GroupDone, typename Finish>
void walk_int8(int m, int n, int k, const Int8Chunking& ch, const Int8Buffers& ws, const MicroKernels& mk,
               int threads, PackA&& pack_a, PackB&& pack_b, Fold&& fold, GroupDone&& group_done, Finish&& finish) {
    for (int i0 = 0; i0 < m; i0 += ch.mc)
        for (int j0 = 0; j0 < n; j0 += ch.nc) {
            const bool a_kept = ch.one_chunk && j0 > 0;  // this row's op(A) chunk, packed already
            const int rows = std::min(ch.mc, m - i0), cols = std::min(ch.nc, n - j0);
            const int mt = (rows + kInt8Tile - 1) / kInt8Tile, nt = (cols + kInt8Tile - 1) / kInt8Tile;
            const int gm = (mt + kInt8GroupTiles - 1) / kInt8GroupTiles;
            const int gn = (nt + kInt8GroupTiles - 1) / kInt8GroupTiles;
            for (int k0 = 0; k0 < k; k0 += ch.kc) {
                const int kc = std::min(ch.kc, k - k0), ksteps = (kc + kInt8Kstep - 1) / kInt8Kstep;
                if (!a_kept) pack_a(i0, rows, k0, kc);
                pack_b(j0, cols, k0, kc);
                const bool first = k0 == 0, last = k0 + kc >= k;
                struct Task final : ParallelTask {
                    std::atomic<int> next{0};
                    int count;
                    const MicroKernels& mk;
                    const std::function<void(int, int)>* body;
                    Task(int c, const MicroKernels& m, const std::function<void(int, int)>* b)
                        : count(c), mk(m), body(b) {}
                    void run(int participant) override {
                        bool begun = false;
                        for (int q; (q = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
                            if (!begun) mk.thread_begin();
                            begun = true;
                            (*body)(q, participant);
                        }
                        if (begun) mk.thread_end();
                    }
                };
                const std::function<void(int, int)> group = [&](int q, int participant) {
                    std::int32_t* tile = ws.tiles + std::size_t(participant) * 2 * kInt8TileValues;
                    std::int32_t* sum = tile + kInt8TileValues;
                    const int ti0 = (q / gn) * kInt8GroupTiles, tj0 = (q % gn) * kInt8GroupTiles;
                    for (int l = 0; l < ch.layers; ++l)
                        for (int ti = ti0; ti < std::min(mt, ti0 + kInt8GroupTiles); ++ti)
                            for (int tj = tj0; tj < std::min(nt, tj0 + kInt8GroupTiles); ++tj) {
                                for (int s0 = 0; s0 < ksteps; s0 += kInt8PanelSteps) {
                                    const int ns = std::min(kInt8PanelSteps, ksteps - s0);
                                    // The chunk's first panel lands in `sum` itself.
                                    mk.product_s8(ns, ws.a[l] + (std::size_t(ti) * ksteps + s0) * kInt8BlockBytes,
                                                  ws.b[l] + (std::size_t(tj) * ksteps + s0) * kInt8BlockBytes,
                                                  s0 == 0 ? sum : tile, kInt8Tile);
                                    if (s0 > 0)
                                        for (int v = 0; v < kInt8TileValues; ++v) sum[v] += tile[v];
                                }
                                fold(l, ti, tj, sum, first, last, participant);
                            }
                    group_done(i0 + ti0 * kInt8Tile, j0 + tj0 * kInt8Tile, std::min(kInt8GroupSide, rows - ti0 * kInt8Tile),
                               std::min(kInt8GroupSide, cols - tj0 * kInt8Tile), last, participant);
                };
                Task task(gm * gn, mk, &group);
                run_parallel(std::min(threads, gm * gn), task);
            }
            finish(i0, j0, rows, cols);
        }
}

}  // namespace amxblas::kernels

// The INT8 engine's macro-kernel (internal: int8_gemm.cc): op(A) (m x k) times op(B) (k x n)
// as `layers` INT8 products at once (one per modulus, or one of magnitudes), in bounded memory.
//
//   for each MC x NC super-block of C
//     for each KC chunk of K
//       pack op(A)'s MC x KC and op(B)'s KC x NC chunk, one buffer per layer (int8_pack.h)
//       for each 128 x 128 group of micro-tiles (handed out one at a time to the threads)
//         for each micro-tile, layer and panel of at most 1024 K values
//           product_s8 -> tile;  acc[layer] (+)= tile          (exact INT32)
//       after_chunk(i0, j0, rows, cols, last)
//
// The INT32 sums are exact while |acc| < 2^31: a chunk adds at most KC 2^14 <= 2^26, and the
// caller reduces the accumulators between chunks when K is deeper than kInt8MaxPanelDepth.
// Every product is exact, so neither the chunks, nor the threads, nor the backend change a bit.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "kernels/int8/int8_pack.h"
#include "kernels/isa/microkernel.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

constexpr std::size_t kInt8BudgetBytes = std::size_t(48) << 20;  // as the BF16 driver's chunks
constexpr int kInt8ChunkDepth = 4096;
constexpr int kInt8PanelSteps = 16;  // K steps per micro-kernel call: 1024 K values
constexpr int kInt8GroupTiles = 4;   // 4 x 4 micro-tiles per task
constexpr int kInt8Mr = kAmxInt8Geometry.mr, kInt8Nr = kAmxInt8Geometry.nr, kInt8Kstep = kAmxInt8Geometry.kstep;
constexpr std::size_t kInt8BlockBytes = std::size_t(kInt8Mr) * kInt8Kstep;  // one packed block, A or B

struct Int8Chunking {
    int mc = 0, nc = 0, kc = 0;  // multiples of 32, 32 and 64 (or the whole padded extent)
    int layers = 0;
};

// One call's buffers, carved from one workspace lease.
struct Int8Buffers {
    std::int8_t* a[kInt8MaxModuli] = {};
    std::int8_t* b[kInt8MaxModuli] = {};
    std::int32_t* acc = nullptr;  // layer l: acc + l * acc_layer, row-major, row stride acc_ld
    std::size_t acc_layer = 0;
    int acc_ld = 0;
    double* extra = nullptr;      // mc x nc doubles, row stride acc_ld (the caller's use)
    std::int32_t* tiles = nullptr;  // one 32 x 32 tile per participant
    double* blocks = nullptr;       // one kBlockM x kBlockN block per participant
};

// The chunking of a call of `layers` products (with an mc x nc FP64 array when extra), and the
// bytes it takes for `threads` participants; at most kInt8BudgetBytes unless even 32 x 32
// super-blocks do not fit (never, for kc <= 4096 and 16 layers).
Int8Chunking int8_chunking(int m, int n, int k, int layers, bool extra, int threads);
std::size_t int8_workspace_bytes(const Int8Chunking& ch, bool extra, int threads);
// Carves buffers for ch out of p (int8_workspace_bytes(ch, extra, threads) bytes).
Int8Buffers int8_buffers(void* p, const Int8Chunking& ch, bool extra, int threads);

template <typename PackA, typename PackB, typename AfterChunk>
void walk_int8(int m, int n, int k, const Int8Chunking& ch, const Int8Buffers& ws, const MicroKernels& mk,
               int threads, PackA&& pack_a, PackB&& pack_b, AfterChunk&& after_chunk) {
    for (int i0 = 0; i0 < m; i0 += ch.mc)
        for (int j0 = 0; j0 < n; j0 += ch.nc) {
            const int rows = std::min(ch.mc, m - i0), cols = std::min(ch.nc, n - j0);
            const int mt = (rows + kInt8Mr - 1) / kInt8Mr, nt = (cols + kInt8Nr - 1) / kInt8Nr;
            const int gm = (mt + kInt8GroupTiles - 1) / kInt8GroupTiles, gn = (nt + kInt8GroupTiles - 1) / kInt8GroupTiles;
            for (int k0 = 0; k0 < k; k0 += ch.kc) {
                const int kc = std::min(ch.kc, k - k0), ksteps = (kc + kInt8Kstep - 1) / kInt8Kstep;
                pack_a(i0, rows, k0, kc);
                pack_b(j0, cols, k0, kc);
                const bool first = k0 == 0;
                struct Task final : ParallelTask {
                    std::atomic<int> next{0};
                    int count;
                    const MicroKernels& mk;
                    const std::function<void(int, int)>* body;
                    Task(int c, const MicroKernels& m, const std::function<void(int, int)>* b) : count(c), mk(m), body(b) {}
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
                    std::int32_t* tile = ws.tiles + std::size_t(participant) * kInt8Mr * kInt8Nr;
                    const int ti0 = (q / gn) * kInt8GroupTiles, tj0 = (q % gn) * kInt8GroupTiles;
                    for (int ti = ti0; ti < std::min(mt, ti0 + kInt8GroupTiles); ++ti)
                        for (int tj = tj0; tj < std::min(nt, tj0 + kInt8GroupTiles); ++tj)
                            for (int l = 0; l < ch.layers; ++l) {
                                std::int32_t* acc = ws.acc + l * ws.acc_layer + std::size_t(ti) * kInt8Mr * ws.acc_ld +
                                                    std::size_t(tj) * kInt8Nr;
                                for (int s0 = 0; s0 < ksteps; s0 += kInt8PanelSteps) {
                                    const int ns = std::min(kInt8PanelSteps, ksteps - s0);
                                    mk.product_s8(ns, ws.a[l] + (std::size_t(ti) * ksteps + s0) * kInt8BlockBytes,
                                                  ws.b[l] + (std::size_t(tj) * ksteps + s0) * kInt8BlockBytes, tile, kInt8Nr);
                                    const bool assign = first && s0 == 0;
                                    for (int r = 0; r < kInt8Mr; ++r)
                                        for (int c = 0; c < kInt8Nr; ++c) {
                                            std::int32_t& d = acc[std::size_t(r) * ws.acc_ld + c];
                                            d = assign ? tile[r * kInt8Nr + c] : d + tile[r * kInt8Nr + c];
                                        }
                                }
                            }
                };
                Task task(gm * gn, mk, &group);
                run_parallel(std::min(threads, gm * gn), task);
                after_chunk(i0, j0, rows, cols, k0 + kc >= k);
            }
        }
}

}  // namespace amxblas::kernels

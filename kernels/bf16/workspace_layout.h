// The workspace of one call (emulated_gemm.h's *_workspace_bytes; internal: the FP32 and FP64
// drivers): the chunk buffers of both operands, the super-block's accumulators and the
// per-thread tiles (chunking.h), and how lay_out carves them.
#pragma once

#include <cstddef>

#include "kernels/bf16/chunking.h"
#include "kernels/isa/microkernel.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

constexpr std::size_t kAlign = 64;

inline std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// FP64 product tiles widened and added in one pass (reconstruct.h): up to 8 (32 KiB, in L1).
constexpr int kWidenBatch = 8;
static_assert(kWidenBatch == 8, "chunking.h's tiles_per_thread");

// Slice buffers of an auto call: its eight slices and, for a call in one chunk, a copy of slice 0
// with the signs cleared (|Z_0|, the certificate's lower-bound product).
constexpr int kFp64AutoSlots = kFp64Slices + 1;

inline int clamp_threads(int t) { return t < 1 ? 1 : t; }

// One call's workspace, carved.
struct CallWorkspace {
    PackedOperand pa, pb;       // the chunk buffers of op(A) and op(B), shaped per chunk (shape_chunk)
    char* acc = nullptr;        // the accumulators: one slot per block of the super-block, or
    std::size_t acc_slot = 0;   //   per thread (Chunking::thread_acc); bm rows of kBlockN values
                                //   (the steps' and writers' row stride)
    char* tiles = nullptr;      // per participant: the mr x nr FP32 micro-tiles (one for FP32,
    std::size_t tile_bytes = 0; //   kWidenBatch for FP64)
};

// Bytes of the workspace of a call cut by bl and c, with `slices` slices per operand and
// accumulators of acc_size bytes (4: FP32, 8: FP64).
std::size_t chunk_workspace_bytes(const Blocking& bl, const Chunking& c, int slices, std::size_t acc_size, int threads);

// Carves that workspace out of base (the tiles last: participant t's at tiles + t * tile_bytes).
CallWorkspace lay_out(char* base, const Blocking& bl, const Chunking& c, int slices, std::size_t acc_size, int threads);

// Sets the shape of a chunk buffer for `outer` rows of op(A) (is_a) or columns of op(B), kc deep.
void shape_chunk(PackedOperand* p, bool is_a, int outer, int kc);

// The workspace of one call (emulated_gemm.h) for the micro-kernel set's geometry g.
std::size_t sgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads);
std::size_t dgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads, int products);
std::size_t dgemm_auto_bytes(const TileGeometry& g, int m, int n, int k, int threads);

}  // namespace amxblas::kernels

// The workspace of one call (emulated_gemm.h's *_workspace_bytes; internal: the FP32 and FP64
// drivers): the packed component buffers, the per-thread scratch, and how lay_out carves them.
#pragma once

#include <cstddef>

#include "kernels/isa/microkernel.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

constexpr std::size_t kAlign = 64;

inline std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// FP64 product tiles widened and added in one pass (reconstruct.h): up to 8 (32 KiB, in L1).
constexpr int kWidenBatch = 8;

// Per thread: the BM x BN block accumulator and the mr x nr FP32 micro-tiles (one for sgemm,
// kWidenBatch for dgemm).
template <typename Acc>
std::size_t thread_scratch_bytes(const TileGeometry& g) {
    const int tiles = sizeof(Acc) == sizeof(double) ? kWidenBatch : 1;
    return align_up(std::size_t(kBlockM) * kBlockN * sizeof(Acc)) + align_up(std::size_t(tiles) * g.mr * g.nr * sizeof(float));
}

inline int clamp_threads(int t) { return t < 1 ? 1 : t; }

// The slice buffers of both operands, `slices` of each, laid out for geometry g (lay_out).
std::size_t component_bytes(const TileGeometry& g, int m, int n, int k, int slices);

// Carves the slice buffers of A then B, laid out for geometry g, out of the workspace; returns
// the first byte after.
char* lay_out(char* base, const TileGeometry& g, int m, int n, int k, int slices, PackedOperand* pa, PackedOperand* pb);

// The workspace of one call (emulated_gemm.h) for the micro-kernel set's geometry g.
std::size_t sgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads);
std::size_t dgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads, int products);
std::size_t dgemm_auto_bytes(const TileGeometry& g, int m, int n, int k, int threads);

}  // namespace amxblas::kernels

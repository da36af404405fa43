// Workspace sizing and layout (workspace_layout.h, emulated_gemm.h's *_workspace_bytes): the
// slice stride with its cache-set stagger, component_bytes, lay_out and the per-call totals.
#include "kernels/driver/workspace_layout.h"

#include "kernels/driver/emulated_gemm.h"

namespace amxblas::kernels {
namespace {

// The distance between two slice buffers of one operand: the slice, plus a stagger. Without
// it, at N = 2048 the slices lie 8 MiB apart, so the blocks a micro-tile reads from its six
// (FP32) or twelve (FP64) buffers at one K step all fall into the same L1 and L2 cache sets and
// alias at 4 KiB (a load seems to depend on an older store to another buffer). 4096 + 64 bytes
// moves each buffer one L1 set and 65 L2 sets further than the one before.
constexpr std::size_t kSliceStagger = 4096 + 64;

std::size_t slice_stride(int outer, int k, int tile, int kstep) {
    return align_up(packed_slice_elems(outer, k, tile, kstep) * sizeof(bf16_t)) + kSliceStagger;
}

}  // namespace

std::size_t component_bytes(const TileGeometry& g, int m, int n, int k, int slices) {
    return slice_stride(m, k, g.mr, g.kstep) * slices + slice_stride(n, k, g.nr, g.kstep) * slices;
}

char* lay_out(char* base, const TileGeometry& g, int m, int n, int k, int slices, PackedOperand* pa, PackedOperand* pb) {
    const std::size_t sa = slice_stride(m, k, g.mr, g.kstep), sb = slice_stride(n, k, g.nr, g.kstep);
    pa->slices = pb->slices = slices;
    pa->geom = pb->geom = g;
    pa->block_elems = std::size_t(g.a_block_elems());
    pb->block_elems = std::size_t(g.b_block_elems());
    pa->panels = round_up(m, g.mr) / g.mr;
    pb->panels = round_up(n, g.nr) / g.nr;
    pa->ksteps = pb->ksteps = round_up(k, g.kstep) / g.kstep;
    for (int s = 0; s < slices; ++s) pa->slice[s] = reinterpret_cast<bf16_t*>(base + s * sa);
    base += slices * sa;
    for (int s = 0; s < slices; ++s) pb->slice[s] = reinterpret_cast<bf16_t*>(base + s * sb);
    return base + slices * sb;
}

std::size_t sgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads) {
    return component_bytes(g, m, n, k, kFp32Slices) + std::size_t(clamp_threads(threads)) * thread_scratch_bytes<float>(g);
}

std::size_t dgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads, int products) {
    return component_bytes(g, m, n, k, fp64_depth(products)) +
           std::size_t(clamp_threads(threads)) * thread_scratch_bytes<double>(g);
}

std::size_t dgemm_auto_bytes(const TileGeometry& g, int m, int n, int k, int threads) {
    return component_bytes(g, m, n, k, kFp64Slices) + std::size_t(clamp_threads(threads)) * thread_scratch_bytes<double>(g) +
           component_bytes(g, m, n, k, 1) + align_up(std::size_t(m) * n * sizeof(double));
}

std::size_t sgemm_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return sgemm_bytes(microkernels_for(backend).geometry, m, n, k, threads);
}

std::size_t dgemm_workspace_bytes(int m, int n, int k, int threads, int products, Backend backend) {
    return dgemm_bytes(microkernels_for(backend).geometry, m, n, k, threads, products);
}

std::size_t dgemm_auto_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return dgemm_auto_bytes(microkernels_for(backend).geometry, m, n, k, threads);
}

}  // namespace amxblas::kernels

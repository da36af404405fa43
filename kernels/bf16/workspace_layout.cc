// Workspace sizing and layout (workspace_layout.h, emulated_gemm.h's *_workspace_bytes): the
// chunk buffers with their cache-set stagger, the accumulators, the tiles (sizes from
// kernels/common/chunk_plan.h), the chunking with the tests' limits.
#include "kernels/bf16/workspace_layout.h"

#include "kernels/bf16/emulated_gemm.h"

namespace amxblas::kernels {

static_assert(kChunkDepth == kBlockK, "a K chunk is one BK panel");
static_assert(kChunkAlign == kAlign, "the workspace's alignment");

std::size_t chunk_workspace_bytes(const Blocking& bl, const Chunking& c, int slices, std::size_t acc_size, int threads) {
    return chunk_bytes(chunk_shape(bl), c, slices, acc_size, threads, tiles_per_thread(acc_size));
}

CallWorkspace lay_out(char* base, const Blocking& bl, const Chunking& c, int slices, std::size_t acc_size, int threads) {
    const TileGeometry& g = bl.g;
    CallWorkspace w;
    const std::size_t sa = chunk_slice_stride(c.mc, c.kc, g.mr, g.kstep), sb = chunk_slice_stride(c.nc, c.kc, g.nr, g.kstep);
    w.pa.slices = w.pb.slices = slices;
    w.pa.geom = w.pb.geom = g;
    w.pa.block_elems = std::size_t(g.a_block_elems());
    w.pb.block_elems = std::size_t(g.b_block_elems());
    for (int s = 0; s < slices; ++s) w.pa.slice[s] = reinterpret_cast<bf16_t*>(base + s * sa);
    base += slices * sa;
    for (int s = 0; s < slices; ++s) w.pb.slice[s] = reinterpret_cast<bf16_t*>(base + s * sb);
    base += slices * sb;
    w.acc = base;
    w.acc_slot = align_up(std::size_t(bl.bm) * kBlockN * acc_size);
    base += chunk_acc_slots(chunk_shape(bl), c, threads) * w.acc_slot;
    w.tiles = base;
    w.tile_bytes = align_up(std::size_t(tiles_per_thread(acc_size)) * g.mr * g.nr * sizeof(float));
    return w;
}

void shape_chunk(PackedOperand* p, bool is_a, int outer, int kc) {
    const int tile = is_a ? p->geom.mr : p->geom.nr;
    p->panels = round_up(outer, tile) / tile;
    p->ksteps = round_up(kc, p->geom.kstep) / p->geom.kstep;
}

Chunking chunking_for(const Blocking& bl, int m, int n, int k, int slices, std::size_t acc_size, int threads,
                      const RunOptions& opt) {
    Chunking c = choose_chunking(bl, m, n, k, slices, acc_size, threads);
    if (opt.chunk_rows > 0) c.mc = std::min(c.mc, round_up(opt.chunk_rows, bl.bm));
    if (opt.chunk_cols > 0) c.nc = std::min(c.nc, round_up(opt.chunk_cols, bl.bn));
    if (opt.chunk_depth > 0) c.kc = std::min(c.kc, round_up(opt.chunk_depth, kBlockK));
    c.thread_acc = c.kc >= k;
    return c;
}

std::size_t sgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads) {
    const Blocking bl(g, m, n, k, threads);
    return chunk_workspace_bytes(bl, choose_chunking(bl, m, n, k, kFp32Slices, sizeof(float), threads), kFp32Slices,
                                 sizeof(float), threads);
}

std::size_t dgemm_bytes(const TileGeometry& g, int m, int n, int k, int threads, int products) {
    const Blocking bl(g, m, n, k, threads);
    const int d = fp64_depth(products);
    return chunk_workspace_bytes(bl, choose_chunking(bl, m, n, k, d, sizeof(double), threads), d, sizeof(double), threads);
}

std::size_t dgemm_auto_bytes(const TileGeometry& g, int m, int n, int k, int threads) {
    const Blocking bl(g, m, n, k, threads);
    return chunk_workspace_bytes(bl, choose_chunking(bl, m, n, k, kFp64AutoSlots, sizeof(double), threads), kFp64AutoSlots,
                                 sizeof(double), threads);
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

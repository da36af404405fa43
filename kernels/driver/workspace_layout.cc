// Workspace sizing and layout (workspace_layout.h, emulated_gemm.h's *_workspace_bytes): the
// chunk buffers with their cache-set stagger, the accumulators, the tiles, the chunking.
#include "kernels/driver/workspace_layout.h"

#include "kernels/driver/emulated_gemm.h"

namespace amxblas::kernels {
namespace {

// The distance between two slice buffers of one operand: the slice, plus a stagger. Without
// it, slices of a large power-of-two size lie a multiple of 4 KiB apart, so the blocks a
// micro-tile reads from its six (FP32) or twelve (FP64) buffers at one K step all fall into
// the same L1 and L2 cache sets and alias at 4 KiB (a load seems to depend on an older store to
// another buffer). 4096 + 64 bytes moves each buffer one L1 set and 65 L2 sets further than
// the one before.
constexpr std::size_t kSliceStagger = 4096 + 64;

std::size_t slice_stride(int outer, int k, int tile, int kstep) {
    return align_up(packed_slice_elems(outer, k, tile, kstep) * sizeof(bf16_t)) + kSliceStagger;
}

int tiles_per_thread(std::size_t acc_size) { return acc_size == sizeof(double) ? kWidenBatch : 1; }

std::size_t acc_slot_bytes(const Blocking& bl, std::size_t acc_size) {
    return align_up(std::size_t(bl.bm) * kBlockN * acc_size);
}

int slots(const Blocking& bl, const Chunking& c) { return ((c.mc + bl.bm - 1) / bl.bm) * ((c.nc + bl.bn - 1) / bl.bn); }

std::size_t tile_bytes(const TileGeometry& g, std::size_t acc_size) {
    return align_up(std::size_t(tiles_per_thread(acc_size)) * g.mr * g.nr * sizeof(float));
}

// A chunk that covers the whole of a dimension is cut down to the call's size, rounded up to
// the micro-kernel's tiles and K steps only: a 17 x 9 x 17 call needs 32 x 32 chunks, not a
// block's 256 x 256. (Where there are several chunks they stay whole blocks and panels.)
Chunking fit(const Blocking& bl, Chunking c, int m, int n, int k) {
    if (c.mc >= m) c.mc = round_up(m, bl.g.mr);
    if (c.nc >= n) c.nc = round_up(n, bl.g.nr);
    if (c.kc >= k) c.kc = round_up(k, bl.g.kstep);
    return c;
}

}  // namespace

std::size_t chunk_workspace_bytes(const Blocking& bl, const Chunking& c, int slices, std::size_t acc_size, int threads) {
    const TileGeometry& g = bl.g;
    return slices * (slice_stride(c.mc, c.kc, g.mr, g.kstep) + slice_stride(c.nc, c.kc, g.nr, g.kstep)) +
           slots(bl, c) * acc_slot_bytes(bl, acc_size) + std::size_t(clamp_threads(threads)) * tile_bytes(g, acc_size);
}

CallWorkspace lay_out(char* base, const Blocking& bl, const Chunking& c, int slices, std::size_t acc_size) {
    const TileGeometry& g = bl.g;
    CallWorkspace w;
    const std::size_t sa = slice_stride(c.mc, c.kc, g.mr, g.kstep), sb = slice_stride(c.nc, c.kc, g.nr, g.kstep);
    w.pa.slices = w.pb.slices = slices;
    w.pa.geom = w.pb.geom = g;
    w.pa.block_elems = std::size_t(g.a_block_elems());
    w.pb.block_elems = std::size_t(g.b_block_elems());
    for (int s = 0; s < slices; ++s) w.pa.slice[s] = reinterpret_cast<bf16_t*>(base + s * sa);
    base += slices * sa;
    for (int s = 0; s < slices; ++s) w.pb.slice[s] = reinterpret_cast<bf16_t*>(base + s * sb);
    base += slices * sb;
    w.acc = base;
    w.acc_slot = acc_slot_bytes(bl, acc_size);
    base += slots(bl, c) * w.acc_slot;
    w.tiles = base;
    w.tile_bytes = tile_bytes(g, acc_size);
    return w;
}

void shape_chunk(PackedOperand* p, bool is_a, int outer, int kc) {
    const int tile = is_a ? p->geom.mr : p->geom.nr;
    p->panels = round_up(outer, tile) / tile;
    p->ksteps = round_up(kc, p->geom.kstep) / p->geom.kstep;
}

Chunking choose_chunking(const Blocking& bl, int m, int n, int k, int slices, std::size_t acc_size, int threads) {
    Chunking c;
    c.kc = std::min(round_up(k, kBlockK), kChunkK);
    const int mmax = round_up(m, bl.bm), nmax = round_up(n, bl.bn);
    c.mc = bl.bm;
    c.nc = bl.bn;
    for (;;) {
        Chunking next = c;
        const bool grow_m = c.mc < mmax && (c.mc <= c.nc || c.nc >= nmax);
        if (grow_m) next.mc += bl.bm;
        else if (c.nc < nmax) next.nc += bl.bn;
        else break;
        if (chunk_workspace_bytes(bl, next, slices, acc_size, threads) > kChunkBudgetBytes) break;
        c = next;
    }
    return fit(bl, c, m, n, k);
}

Chunking chunking_for(const Blocking& bl, int m, int n, int k, int slices, std::size_t acc_size, int threads,
                      const RunOptions& opt) {
    Chunking c = choose_chunking(bl, m, n, k, slices, acc_size, threads);
    if (opt.chunk_rows > 0) c.mc = std::min(c.mc, round_up(opt.chunk_rows, bl.bm));
    if (opt.chunk_cols > 0) c.nc = std::min(c.nc, round_up(opt.chunk_cols, bl.bn));
    if (opt.chunk_depth > 0) c.kc = std::min(c.kc, round_up(opt.chunk_depth, kBlockK));
    return fit(bl, c, m, n, k);
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
    return dgemm_bytes(g, m, n, k, threads, fp64_products_of_depth(kFp64Slices)) + align_up(std::size_t(m) * n * sizeof(double));
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

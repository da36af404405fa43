// The blocked driver (paper Sections 6.1-6.3, kernels/driver/blocked_gemm.h) and the SGEMM and DGEMM
// entry points (CGEMM and ZGEMM: complex_gemm.cc, on the same macro-kernel).
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
// per-precision step (Fp32Step, Fp64Step) says what one micro-tile of one panel adds to the
// block accumulator.
//
// Why BK = 256 makes the FP64 path exact before widening: a normalised slice entry (pack.h,
// split.h) is a multiple of 2^-8 of magnitude <= 1, so a product of two is a multiple of
// 2^-16 of magnitude <= 1, and any partial sum of 256 of them is an integer multiple of 2^-16
// no larger than 2^24 units: exactly representable in FP32, and never below 2^-16 unless zero,
// so nothing is flushed. Every per-panel FP32 result is the exact real sum, so backends, pair
// orders and thread counts cannot change a single bit; the power-of-two factors are exact too
// (barring FP64 underflow below 2^-1022, which docs/fp64-certificate.md counts).
//
// The FP64 accumulation runs smallest product first, so that before the leading product (0, 0)
// of a panel is added the partial sums are small: for K <= 256 the rounding error is then close
// to one rounding of the result (docs/fp64-certificate.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/isa/backend.h"
#include "kernels/common/reasons.h"
#include "kernels/driver/emulated_gemm.h"
#include "kernels/driver/blocked_gemm.h"
#include "kernels/pack/pack.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/runtime/thread_pool.h"
#include "kernels/common/variants.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {
namespace {

constexpr std::size_t kAlign = 64;

std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// The distance between two slice buffers of one operand: the slice, plus a stagger. Without
// it, at N = 2048 the slices lie 8 MiB apart, so the blocks a micro-tile reads from its six
// (FP32) or twelve (FP64) buffers at one K step all fall into the same L1 and L2 cache sets and
// alias at 4 KiB (a load seems to depend on an older store to another buffer). 4096 + 64 bytes
// moves each buffer one L1 set and 65 L2 sets further than the one before.
constexpr std::size_t kSliceStagger = 4096 + 64;

std::size_t slice_stride(int outer, int k, int tile, int kstep) {
    return align_up(packed_slice_elems(outer, k, tile, kstep) * sizeof(bf16_t)) + kSliceStagger;
}

std::size_t component_bytes(const TileGeometry& g, int m, int n, int k, int slices) {
    return slice_stride(m, k, g.mr, g.kstep) * slices + slice_stride(n, k, g.nr, g.kstep) * slices;
}

// FP64 product tiles widened and added in one pass (reconstruct.h): up to 8 (32 KiB, in L1).
constexpr int kWidenBatch = 8;

// Per thread: the BM x BN block accumulator and the mr x nr FP32 micro-tiles (one for sgemm,
// kWidenBatch for dgemm).
template <typename Acc>
std::size_t thread_scratch_bytes(const TileGeometry& g) {
    const int tiles = sizeof(Acc) == sizeof(double) ? kWidenBatch : 1;
    return align_up(std::size_t(kBlockM) * kBlockN * sizeof(Acc)) + align_up(std::size_t(tiles) * g.mr * g.nr * sizeof(float));
}

char normalise_trans(char t) { return (t == 'N' || t == 'n') ? 'N' : 'T'; }

// Carves the slice buffers of A then B, laid out for geometry g, out of the workspace; returns
// the first byte after.
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

const char* check_backend(const RunOptions& opt) {
    if (!backend_built(opt.backend)) return reason::backend_not_built;
    if (!backend_usable(opt.backend, opt.amx_emulator)) return reason::backend_not_runnable;
    return nullptr;
}

// The call's micro-kernel set: the backend's, or the caller's own (RunOptions::microkernels).
MicroKernels kernels_for(const RunOptions& opt) {
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

// C(i0.., j0..) := alpha * acc + beta * C over one block of rows x cols; acc is row-major with
// row stride kBlockN. beta == 0 writes alpha * acc without reading C.
template <typename T>
void write_block(const GemmArgs<T>& g, int i0, int j0, int rows, int cols, const T* acc) {
    for (int j = 0; j < cols; ++j) {
        T* c = g.c + i0 + std::size_t(j0 + j) * g.ldc;
        if (g.beta == T(0)) {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * acc[i * kBlockN + j];
        } else {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * acc[i * kBlockN + j] + g.beta * c[i];
        }
    }
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

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

// FP32: one fused six-product chain per micro-tile and panel, added to an FP32 accumulator.
// The first panel stores its chain in place, so the accumulator needs no clearing.
struct Fp32Step {
    using Acc = float;
    const PackedOperand& pa;
    const PackedOperand& pb;
    const ReconstructKernels& rk;
    ReconClock* recon;
    void begin_block(float*, int, int) const {}
    void tile(const MicroKernels& mk, int panel, int ns, int pi, int pj, int s0, float* dst, float* tile) const {
        Fp32Panels p;
        for (int s = 0; s < kFp32Slices; ++s) {
            p.a[s] = pa.block(s, pi, s0);
            p.b[s] = pb.block(s, pj, s0);
        }
        if (panel == 0) {
            mk.fp32_chain(ns, p, dst, kBlockN);  // first panel: store in place
            return;
        }
        const TileGeometry& g = mk.geometry;
        mk.fp32_chain(ns, p, tile, g.nr);
        recon->time([&] {
            if (g == kAmxGeometry) rk.add_fp32(tile, dst, kBlockN);
            else add_fp32_tile(tile, g.mr, g.nr, dst, kBlockN);
        });
    }
    void finish(int, int, float*, int, int) const {}
};

struct Fp64Product {
    int i, j;
};

// The retained products (i, j), i + j < d, smallest first: index sum descending, i descending
// within a diagonal (the reverse of Algorithm 2's order), for the FP64 variant of
// kernels/common/variants.def with `products` products; 0 when there is none.
int fp64_schedule(int products, Fp64Product* out) {
    const Variant* v = fp64_variant(products);
    if (!v) return 0;
    const int d = v->depth;
    int q = 0;
    for (int diag = d - 1; diag >= 0; --diag)
        for (int i = diag; i >= 0; --i) out[q++] = {i, diag - i};
    return q;
}

// x * 2^e, rounded once (what ldexp gives), with a multiply when 2^e is a normal double.
inline double scale_pow2(double x, int e) {
    if (e >= -1022 && e <= 1023) {
        const std::uint64_t bits = std::uint64_t(e + 1023) << 52;
        double p;
        std::memcpy(&p, &bits, sizeof p);
        return x * p;
    }
    return std::ldexp(x, e);
}

// FP64: each live product per micro-tile and panel, widened, multiplied by its exact factor
// 2^(v_A(i) + v_B(j)) and added to an FP64 accumulator that starts at zero, in schedule order;
// up to kWidenBatch product tiles are formed before they are added. With row_exps non-null
// finish scales the block by 2^(e_i + f_j) before the caller's writer sends it to C; the
// certificate's lower-bound product leaves it as it is.
struct Fp64Step {
    using Acc = double;
    const PackedOperand& pa;
    const PackedOperand& pb;
    const ReconstructKernels& rk;
    const Fp64Product* sched;
    const double* pscale;
    int live;
    const int* row_exps;
    const int* col_exps;
    ReconClock* recon;
    void begin_block(double* acc, int rows, int cols) const {
        for (int r = 0; r < rows; ++r) std::memset(acc + r * kBlockN, 0, sizeof(double) * cols);
    }
    void tile(const MicroKernels& mk, int, int ns, int pi, int pj, int s0, double* dst, float* tiles) const {
        const TileGeometry& g = mk.geometry;
        const std::size_t tile_elems = std::size_t(g.mr) * g.nr;
        for (int q0 = 0; q0 < live; q0 += kWidenBatch) {
            const int nq = std::min(kWidenBatch, live - q0);
            for (int q = 0; q < nq; ++q)
                mk.product(ns, pa.block(sched[q0 + q].i, pi, s0), pb.block(sched[q0 + q].j, pj, s0),
                           tiles + q * tile_elems, g.nr);
            recon->time([&] {
                if (g == kAmxGeometry) rk.widen_add(tiles, pscale + q0, nq, dst, kBlockN);
                else widen_add_tile(tiles, g.mr, g.nr, pscale + q0, nq, dst, kBlockN);
            });
        }
    }
    // acc := acc * 2^(e_i + f_j), rounded once: the writer's alpha * acc + beta * C is then
    // alpha * ldexp(acc, e_i + f_j) + beta * C.
    void finish(int i0, int j0, double* acc, int rows, int cols) const {
        if (!row_exps) return;
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j) acc[i * kBlockN + j] = scale_pow2(acc[i * kBlockN + j], row_exps[i0 + i] + col_exps[j0 + j]);
    }
};

int clamp_threads(int t) { return t < 1 ? 1 : t; }

// The workspace of one call (emulated_gemm.h) for the micro-kernel set's geometry g.
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

// What the split found, for the caller's checks and the auto certificate.
Fp64SplitFacts split_facts(const Fp64Split& sp, int outer, const unsigned char* zero) {
    Fp64SplitFacts f;
    f.outer = outer;
    f.slices = sp.sc.slices;
    f.active = sp.sc.active;
    for (int r = 0; r < sp.sc.active; ++r) f.v[r] = ozaki_v(sp.sc.sigma[r]);
    // The residual maxima themselves, or, when some scaled entry was rounded below 2^-1022
    // (by at most 2^-1075, pack.h), at least 2^-1000 with a margin that covers that rounding.
    for (int r = 0; r <= sp.sc.slices; ++r)
        f.rho[r] = sp.subnormal_scaled ? std::max(sp.resid[r], 0x1p-1000) * (1 + 0x1p-40) : sp.resid[r];
    f.norms = sp.norms;
    f.zero = zero;
    return f;
}

// Keeps the products of nonzero slices (the others are zero) and gives each its factor
// 2^(v_A(i) + v_B(j)). Returns how many are kept.
int live_products(const Fp64Scales& sa, const Fp64Scales& sb, Fp64Product* sched, int np, double* pscale) {
    int live = 0;
    for (int q = 0; q < np; ++q) {
        if (sched[q].i >= sa.active || sched[q].j >= sb.active) continue;
        pscale[live] = std::ldexp(1.0, ozaki_v(sa.sigma[sched[q].i]) + ozaki_v(sb.sigma[sched[q].j]));
        sched[live++] = sched[q];
    }
    return live;
}

// A copy of slice 0 with the sign bits cleared: |Z_0| for the certificate's lower bound; one
// panel (ksteps packed blocks) per task.
void abs_slice(const PackedOperand& src, bf16_t* dst, int threads) {
    const std::size_t panel_elems = std::size_t(src.ksteps) * src.block_elems;
    parallel_for(threads, src.panels, [&](int p, int) {
        const bf16_t* from = src.slice[0] + std::size_t(p) * panel_elems;
        bf16_t* to = dst + std::size_t(p) * panel_elems;
        for (std::size_t q = 0; q < panel_elems; ++q) to[q] = from[q] & 0x7FFF;
    });
}

}  // namespace

const char* run_fp32_gemm(const OperandView<float>& va, const OperandView<float>& vb, int m, int n, int k,
                          const RunOptions& opt, const BlockWriter<float>& write) {
    if (const char* why = check_backend(opt)) return why;
    const int threads = clamp_threads(opt.threads);
    const MicroKernels mk = kernels_for(opt);
    const TileGeometry& g = mk.geometry;
    WorkspaceLease ws;
    if (const char* why = lease_workspace(sgemm_bytes(g, m, n, k, threads), opt.workspace_cap_bytes, &ws))
        return why;
    PackedOperand pa, pb;
    char* scratch = lay_out(static_cast<char*>(ws.data()), g, m, n, k, kFp32Slices, &pa, &pb);
    pa.stream = pb.stream = component_bytes(g, m, n, k, kFp32Slices) > streaming_threshold_bytes();

    const double t0 = now_s();
    const SplitKernels& sk = split_kernels();
    pack_a_fp32(va, pa, sk, threads);
    pack_b_fp32(vb, pb, sk, threads);
    const double t1 = now_s();

    ReconClock recon;
    recon.on = opt.times != nullptr;
    run_blocks(m, n, k, Fp32Step{pa, pb, reconstruct_kernels(), &recon}, mk, scratch, threads, write);
    if (opt.times) {
        opt.times->split_pack_s = t1 - t0;
        opt.times->compute_s = now_s() - t1;
        const Blocking bl(g, m, n, k, threads);
        opt.times->reconstruct_s = recon.seconds(threads, bl.mblocks * bl.nblocks);
    }
    return nullptr;
}

// Everything a prepared DGEMM (or ZGEMM) carries from its prepare to compute_dgemm: the real
// GEMM's sizes and the writer that puts its blocks into the caller's C.
struct PreparedDgemm::State {
    int m = 0, n = 0, k = 0;
    BlockWriter<double> write;
    RunOptions opt;
    int threads = 1;
    MicroKernels mk;  // the call's micro-kernel set (kernels_for)
    WorkspaceLease ws;
    PackedOperand pa, pb;
    char* scratch = nullptr;
    double split_pack_s = 0;
    Fp64Split sa, sb;
    std::vector<int> row_exps, col_exps;
    std::vector<unsigned char> row_zero, col_zero;  // auto
    std::vector<double> norms_a, norms_b;           // auto
    Fp64Repairer repair;  // set by prepare_dgemm and prepare_zgemm: repairs need the caller's C
};

void set_fp64_repairer(PreparedDgemm* prepared, Fp64Repairer repairer) {
    if (prepared && prepared->state) prepared->state->repair = std::move(repairer);
}

PreparedDgemm::PreparedDgemm() = default;
PreparedDgemm::~PreparedDgemm() = default;
PreparedDgemm::PreparedDgemm(PreparedDgemm&&) noexcept = default;
PreparedDgemm& PreparedDgemm::operator=(PreparedDgemm&&) noexcept = default;

const char* prepare_fp64_gemm(const OperandView<double>& va, const OperandView<double>& vb, int m, int n, int k,
                              const RunOptions& opt, BlockWriter<double> write, PreparedDgemm* out) {
    out->state.reset();
    out->lower = nullptr;
    if (const char* why = check_backend(opt)) return why;
    const bool automatic = opt.fp64_products == kFp64Auto;
    const int slices = automatic ? kFp64Slices : fp64_depth(opt.fp64_products);
    if (slices == 0) return reason::config_fp64_products;
    auto st = std::make_unique<PreparedDgemm::State>();
    st->m = m;
    st->n = n;
    st->k = k;
    st->write = std::move(write);
    st->opt = opt;
    st->threads = clamp_threads(opt.threads);
    st->mk = kernels_for(opt);
    const int threads = st->threads;
    const TileGeometry& g = st->mk.geometry;

    // The exponent scans run inside the split (scan_split_pack_*_fp64: each panel is scanned
    // just before it is packed, so the input is read once). An Inf or NaN is still reported
    // before any other reason, as when the scans ran first: a failed lease or a slice outside
    // the BF16 range (a safety net) is returned only when neither operand has one.
    const double t0 = now_s();
    const SplitKernels& sk = split_kernels();
    st->row_exps.resize(std::size_t(m));
    st->col_exps.resize(std::size_t(n));
    if (automatic) {
        st->row_zero.resize(std::size_t(m));
        st->col_zero.resize(std::size_t(n));
    }
    const auto nonfinite_first = [&](const char* why) {
        bool nonzero;
        std::vector<int> exps(std::size_t(std::max(m, n)));
        if (const char* w = fp64_outer_exponents(va, true, threads, exps.data(), &nonzero)) return w;
        if (const char* w = fp64_outer_exponents(vb, false, threads, exps.data(), &nonzero)) return w;
        return why;
    };

    const std::size_t bytes = automatic ? dgemm_auto_bytes(g, m, n, k, threads)
                                        : dgemm_bytes(g, m, n, k, threads, opt.fp64_products);
    if (const char* why = lease_workspace(bytes, opt.workspace_cap_bytes, &st->ws)) return nonfinite_first(why);
    st->scratch = lay_out(static_cast<char*>(st->ws.data()), g, m, n, k, slices, &st->pa, &st->pb);
    if (automatic) {
        st->norms_a.resize(std::size_t(slices) * m);
        st->norms_b.resize(std::size_t(slices) * n);
        st->sa.norms = st->norms_a.data();
        st->sb.norms = st->norms_b.data();
    }
    bool a_nonzero = false, b_nonzero = false;
    if (const char* why = scan_split_pack_a_fp64(va, st->row_exps.data(), automatic ? st->row_zero.data() : nullptr,
                                                 &a_nonzero, &st->sa, st->pa, sk, threads))
        return why == reason::domain_nonfinite ? why : nonfinite_first(why);
    if (const char* why = scan_split_pack_b_fp64(vb, st->col_exps.data(), automatic ? st->col_zero.data() : nullptr,
                                                 &b_nonzero, &st->sb, st->pb, sk, threads))
        return nonfinite_first(why);
    out->a = split_facts(st->sa, m, automatic ? st->row_zero.data() : nullptr);
    out->b = split_facts(st->sb, n, automatic ? st->col_zero.data() : nullptr);
    st->split_pack_s = now_s() - t0;

    if (automatic) {
        // The certificate's lower bound of |A||B|: one BF16 product of |Z_0^A| and |Z_0^B|,
        // exact per panel like every other product, summed over the panels in FP64.
        const std::size_t sa_bytes = align_up(packed_slice_elems(m, k, g.mr, g.kstep) * sizeof(bf16_t));
        const std::size_t sb_bytes = align_up(packed_slice_elems(n, k, g.nr, g.kstep) * sizeof(bf16_t));
        char* extra = st->scratch + std::size_t(threads) * thread_scratch_bytes<double>(g);
        PackedOperand abs_a = st->pa, abs_b = st->pb;
        abs_a.slice[0] = reinterpret_cast<bf16_t*>(extra);
        abs_b.slice[0] = reinterpret_cast<bf16_t*>(extra + sa_bytes);
        double* lower = reinterpret_cast<double*>(extra + sa_bytes + sb_bytes);
        const double t1 = now_s();
        if (st->sa.sc.active > 0 && st->sb.sc.active > 0) {
            abs_slice(st->pa, abs_a.slice[0], threads);
            abs_slice(st->pb, abs_b.slice[0], threads);
            const Fp64Product first[1] = {{0, 0}};
            const double one[1] = {1.0};
            ReconClock no_clock;
            run_blocks(m, n, k, Fp64Step{abs_a, abs_b, reconstruct_kernels(), first, one, 1, nullptr, nullptr, &no_clock},
                       st->mk, st->scratch, threads, [lower, m](int i0, int j0, int rows, int cols, const double* acc) {
                           for (int j = 0; j < cols; ++j)
                               for (int i = 0; i < rows; ++i) lower[i0 + i + std::size_t(j0 + j) * m] = acc[i * kBlockN + j];
                       });
        } else {
            std::fill(lower, lower + std::size_t(m) * n, 0.0);
        }
        out->lower = lower;
        if (opt.times) opt.times->certificate_s = now_s() - t1;
    }
    out->state = std::move(st);
    return nullptr;
}

namespace {

const char* dgemm_compute(PreparedDgemm* p, int products, const std::size_t* repair_at, std::size_t repairs) {
    if (!p || !p->state) return reason::config_fp64_products;
    PreparedDgemm::State& st = *p->state;
    Fp64Product sched[kMaxFp64Products];
    const int np = fp64_schedule(products, sched);
    if (np == 0 || fp64_depth(products) > st.sa.sc.slices) return reason::config_fp64_products;
    if (repairs > 0 && !st.repair) return reason::config_fp64_products;
    const double t1 = now_s();
    // The repairer reads C's old values of the entries now, before the products overwrite them.
    const std::function<void(int)> finish_repairs = repairs > 0 ? st.repair(repair_at, repairs) : nullptr;
    double pscale[kMaxFp64Products];
    const int live = live_products(st.sa.sc, st.sb.sc, sched, np, pscale);
    ReconClock recon;
    recon.on = st.opt.times != nullptr;
    run_blocks(st.m, st.n, st.k, Fp64Step{st.pa, st.pb, reconstruct_kernels(), sched, pscale, live, st.row_exps.data(), st.col_exps.data(), &recon},
               st.mk, st.scratch, st.threads, st.write);
    if (finish_repairs) finish_repairs(st.threads);
    if (st.opt.times) {
        st.opt.times->split_pack_s = st.split_pack_s;
        st.opt.times->compute_s = now_s() - t1;
        const Blocking bl(st.mk.geometry, st.m, st.n, st.k, st.threads);
        st.opt.times->reconstruct_s = recon.seconds(st.threads, bl.mblocks * bl.nblocks);
    }
    return nullptr;
}

}  // namespace

std::size_t sgemm_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return sgemm_bytes(microkernels_for(backend).geometry, m, n, k, threads);
}

int fp64_depth(int products) {
    const Variant* v = fp64_variant(products);
    return v ? v->depth : 0;
}

std::size_t dgemm_workspace_bytes(int m, int n, int k, int threads, int products, Backend backend) {
    return dgemm_bytes(microkernels_for(backend).geometry, m, n, k, threads, products);
}

std::size_t dgemm_auto_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return dgemm_auto_bytes(microkernels_for(backend).geometry, m, n, k, threads);
}

namespace {

// DGEMM's repairs: the entries the certificate could not vouch for, as FP64 inner products in
// index order, the computation DGEMM's own error bound describes.
Fp64Repairer dgemm_repairer(const GemmArgs<double>& g) {
    return [g](const std::size_t* repair_at, std::size_t repairs) -> std::function<void(int)> {
        std::vector<double> c_old(repairs);
        for (std::size_t q = 0; q < repairs; ++q) {
            const std::size_t i = repair_at[q] % std::size_t(g.m), j = repair_at[q] / std::size_t(g.m);
            c_old[q] = g.beta == 0.0 ? 0.0 : g.c[i + j * std::size_t(g.ldc)];
        }
        return [g, repair_at, repairs, c_old = std::move(c_old)](int threads) {
            const OperandView<double> va{normalise_trans(g.transa), g.m, g.k, g.a, g.lda};
            const OperandView<double> vb{normalise_trans(g.transb), g.k, g.n, g.b, g.ldb};
            const auto at = [](const OperandView<double>& v, int row, int col) {
                return v.trans == 'N' ? v.x[row + std::size_t(col) * v.ld] : v.x[col + std::size_t(row) * v.ld];
            };
            parallel_for(threads, int(repairs), [&](int q, int) {
                const int i = int(repair_at[q] % std::size_t(g.m)), j = int(repair_at[q] / std::size_t(g.m));
                double dot = 0;
                for (int l = 0; l < g.k; ++l) dot += at(va, i, l) * at(vb, l, j);
                double* c = g.c + i + std::size_t(j) * g.ldc;
                *c = g.beta == 0.0 ? g.alpha * dot : g.alpha * dot + g.beta * c_old[q];
            });
        };
    };
}

}  // namespace

const char* emulate_sgemm(const GemmArgs<float>& g, const RunOptions& opt) {
    return guarded([&] {
        return run_fp32_gemm({normalise_trans(g.transa), g.m, g.k, g.a, g.lda},
                             {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, g.m, g.n, g.k, opt,
                             [&g](int i0, int j0, int rows, int cols, const float* acc) {
                                 write_block(g, i0, j0, rows, cols, acc);
                             });
    });
}

const char* prepare_dgemm(const GemmArgs<double>& g, const RunOptions& opt, PreparedDgemm* out) {
    // The writer keeps its own copy of the arguments: it runs in compute_dgemm.
    const char* why = guarded([&]() -> const char* {
        if (const char* w = prepare_fp64_gemm({normalise_trans(g.transa), g.m, g.k, g.a, g.lda},
                                              {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, g.m, g.n, g.k, opt,
                                              [g](int i0, int j0, int rows, int cols, const double* acc) {
                                                  write_block(g, i0, j0, rows, cols, acc);
                                              },
                                              out))
            return w;
        set_fp64_repairer(out, dgemm_repairer(g));
        return nullptr;
    });
    if (why) out->state.reset();  // a failed prepare frees its workspace at once
    return why;
}

const char* compute_dgemm(PreparedDgemm* prepared, int products, const std::size_t* repair_at, std::size_t repairs) {
    return guarded([&] { return dgemm_compute(prepared, products, repair_at, repairs); });
}

}  // namespace amxblas::kernels

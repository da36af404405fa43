// The blocked driver (paper Sections 6.1-6.3, kernels/macro_kernel.h) and the SGEMM and DGEMM
// entry points (CGEMM and ZGEMM: complex_gemm.cc, on the same macro-kernel).
//
//   for each BM x BN output block (handed out one at a time to the threads: kernels/thread_pool.h)
//     for each BK panel
//       for each 32x32 micro-tile
//         FP32: one fused six-product chain -> tile; block accumulator (FP32) += tile
//         FP64: for each product (i, j), i + j < d, in index-sum order:
//               one product -> tile; block accumulator (FP64) += widen(tile)
//     the caller's writer: C := alpha * accumulator + beta * C   (beta == 0: C is not read)
//
// One macro-kernel (run_blocks) walks the blocks, panels and tiles for both precisions; the
// per-precision step (Fp32Step, Fp64Step) says what one micro-tile of one panel adds to the
// block accumulator.
//
// Why BK = 256 makes the FP64 path exact before widening: an Ozaki chunk of slice r is a
// multiple of 2^(v_r - 8) with magnitude <= 2^v_r, so a product of slices (i, j) is a multiple
// of 2^(vA_i + vB_j - 16) of magnitude <= 2^(vA_i + vB_j), and any partial sum of 256 of them
// is an integer multiple of that unit no larger than 2^24 units: exactly representable in FP32
// (barring flush-to-zero of results below 2^-126, which the caller rules out on the exponents
// prepare_dgemm reports). Every per-panel FP32 result is the exact real sum, so backends, pair
// orders and thread counts cannot change a single bit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "kernels/backend.h"
#include "kernels/reasons.h"
#include "kernels/emulated_gemm.h"
#include "kernels/macro_kernel.h"
#include "kernels/pack.h"
#include "kernels/reconstruct.h"
#include "kernels/thread_pool.h"
#include "kernels/variants.h"
#include "kernels/workspace.h"

namespace amxblas::kernels {
namespace {

constexpr std::size_t kAlign = 64;
constexpr int kTilesPerBlock = kBlockM / kTile;  // 8 micro-tiles per block side
constexpr int kStepsPerPanel = kBlockK / kTile;  // 8 K steps per BK panel

std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// The distance between two slice buffers of one operand: the slice, plus a stagger. Without
// it, at N = 2048 the slices lie 8 MiB apart, so the blocks a micro-tile reads from its six
// (FP32) or twelve (FP64) buffers at one K step all fall into the same L1 and L2 cache sets and
// alias at 4 KiB (a load seems to depend on an older store to another buffer). 4096 + 64 bytes
// moves each buffer one L1 set and 65 L2 sets further than the one before.
constexpr std::size_t kSliceStagger = 4096 + 64;

std::size_t slice_stride(int outer, int k) {
    return align_up(packed_slice_elems(outer, k) * sizeof(bf16_t)) + kSliceStagger;
}

std::size_t component_bytes(int m, int n, int k, int slices) {
    return slice_stride(m, k) * slices + slice_stride(n, k) * slices;
}

// FP64 product tiles widened and added in one pass (reconstruct.h): up to 8 (32 KiB, in L1).
constexpr int kWidenBatch = 8;

// Per thread: the BM x BN block accumulator and the 32x32 FP32 micro-tiles (one for sgemm,
// kWidenBatch for dgemm).
template <typename Acc>
std::size_t thread_scratch_bytes() {
    const int tiles = sizeof(Acc) == sizeof(double) ? kWidenBatch : 1;
    return align_up(std::size_t(kBlockM) * kBlockN * sizeof(Acc)) + align_up(tiles * kStepElems * sizeof(float));
}

char normalise_trans(char t) { return (t == 'N' || t == 'n') ? 'N' : 'T'; }

// Carves the slice buffers of A then B out of the workspace; returns the first byte after.
char* lay_out(char* base, int m, int n, int k, int slices, PackedOperand* pa, PackedOperand* pb) {
    const std::size_t sa = slice_stride(m, k), sb = slice_stride(n, k);
    pa->slices = pb->slices = slices;
    pa->panels = round_up_tile(m) / kTile;
    pb->panels = round_up_tile(n) / kTile;
    pa->ksteps = pb->ksteps = round_up_tile(k) / kTile;
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

// The block geometry shared by both precisions.
struct Blocking {
    int mtiles, ntiles, ksteps;  // in 32s, after padding
    int mblocks, nblocks, panels;
    Blocking(int m, int n, int k)
        : mtiles(round_up_tile(m) / kTile), ntiles(round_up_tile(n) / kTile), ksteps(round_up_tile(k) / kTile),
          mblocks((mtiles + kTilesPerBlock - 1) / kTilesPerBlock),
          nblocks((ntiles + kTilesPerBlock - 1) / kTilesPerBlock),
          panels((ksteps + kStepsPerPanel - 1) / kStepsPerPanel) {}
};

// C(i0.., j0..) := alpha * acc + beta * C over the valid part of one block; acc is row-major
// with row stride kBlockN. beta == 0 writes alpha * acc without reading C.
template <typename T>
void write_block(const GemmArgs<T>& g, int i0, int j0, const T* acc) {
    const int rows = std::min(kBlockM, g.m - i0), cols = std::min(kBlockN, g.n - j0);
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
// (two clock reads per micro-tile and panel: negligible beside its products).
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
            char* mine = scratch + thread_scratch_bytes<Acc>() * participant;
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
// panel, may store it); then the block goes to the caller's writer.
//   struct Step {
//       using Acc = ...;  // float or double, the type of the block accumulator and of C
//       void begin_block(Acc* acc, int rows, int cols) const;
//       void tile(const MicroKernels& mk, int panel, int ksteps, int pi, int pj, int s0,
//                 Acc* dst, float* tile) const;  // dst: the tile's corner, row stride kBlockN
//   };
template <typename Step>
void run_blocks(int m, int n, int k, const Step& step, const MicroKernels& mk, char* scratch, int threads,
                const BlockWriter<typename Step::Acc>& write) {
    using Acc = typename Step::Acc;
    const Blocking bl(m, n, k);
    for_each_block<Acc>(threads, bl, scratch, mk, [&](int ib, int jb, Acc* acc, float* tile) {
        const int ti_end = std::min(kTilesPerBlock, bl.mtiles - ib * kTilesPerBlock);
        const int tj_end = std::min(kTilesPerBlock, bl.ntiles - jb * kTilesPerBlock);
        step.begin_block(acc, ti_end * kTile, tj_end * kTile);
        for (int kb = 0; kb < bl.panels; ++kb) {
            const int s0 = kb * kStepsPerPanel, ns = std::min(kStepsPerPanel, bl.ksteps - s0);
            for (int ti = 0; ti < ti_end; ++ti)
                for (int tj = 0; tj < tj_end; ++tj) {
                    const int pi = ib * kTilesPerBlock + ti, pj = jb * kTilesPerBlock + tj;
                    step.tile(mk, kb, ns, pi, pj, s0, acc + ti * kTile * kBlockN + tj * kTile, tile);
                }
        }
        write(ib * kBlockM, jb * kBlockN, acc);
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
        mk.fp32_chain(ns, p, tile, kTile);
        recon->time([&] { rk.add_fp32(tile, dst, kBlockN); });
    }
};

struct Fp64Product {
    int i, j;
};

// Products with i + j < d in index-sum order, i ascending within a diagonal (Algorithm 2), for
// the FP64 variant of kernels/variants.def with `products` products; 0 when there is none.
int fp64_schedule(int products, Fp64Product* out) {
    const Variant* v = fp64_variant(products);
    if (!v) return 0;
    const int d = v->depth;
    int q = 0;
    for (int diag = 0; diag < d; ++diag)
        for (int i = 0; i <= diag; ++i) out[q++] = {i, diag - i};
    return q;
}

// FP64: each scheduled product per micro-tile and panel, widened and added to an FP64
// accumulator that starts at zero; up to kWidenBatch product tiles at a time (reconstruct.h).
struct Fp64Step {
    using Acc = double;
    const PackedOperand& pa;
    const PackedOperand& pb;
    const Fp64Product* sched;
    int np;
    const ReconstructKernels& rk;
    ReconClock* recon;
    void begin_block(double* acc, int rows, int cols) const {
        for (int r = 0; r < rows; ++r) std::memset(acc + r * kBlockN, 0, sizeof(double) * cols);
    }
    void tile(const MicroKernels& mk, int, int ns, int pi, int pj, int s0, double* dst, float* tiles) const {
        for (int q0 = 0; q0 < np; q0 += kWidenBatch) {
            const int nq = std::min(kWidenBatch, np - q0);
            for (int q = 0; q < nq; ++q)
                mk.product(ns, pa.block(sched[q0 + q].i, pi, s0), pb.block(sched[q0 + q].j, pj, s0),
                           tiles + std::size_t(q) * kStepElems, kTile);
            recon->time([&] { rk.widen_add(tiles, nq, dst, kBlockN); });
        }
    }
};

int clamp_threads(int t) { return t < 1 ? 1 : t; }

// The split's slice exponents v(r) (sigma_r = 0.75 * 2^(v(r) + rho)), for the caller's checks.
Fp64SplitFacts split_facts(const Fp64Scales& sc) {
    Fp64SplitFacts f;
    f.active = sc.active;
    for (int r = 0; r < sc.active; ++r) f.v[r] = ozaki_v(sc.sigma[r]);
    return f;
}

}  // namespace

const char* run_fp32_gemm(const OperandView<float>& va, const OperandView<float>& vb, int m, int n, int k,
                          const RunOptions& opt, const BlockWriter<float>& write) {
    if (const char* why = check_backend(opt)) return why;
    const int threads = clamp_threads(opt.threads);
    WorkspaceLease ws;
    if (const char* why = lease_workspace(sgemm_workspace_bytes(m, n, k, threads), opt.workspace_cap_bytes, &ws))
        return why;
    PackedOperand pa, pb;
    char* scratch = lay_out(static_cast<char*>(ws.data()), m, n, k, kFp32Slices, &pa, &pb);
    pa.stream = pb.stream = component_bytes(m, n, k, kFp32Slices) > streaming_threshold_bytes();

    const double t0 = now_s();
    const SplitKernels& sk = split_kernels();
    pack_a_fp32(va, pa, sk, threads);
    pack_b_fp32(vb, pb, sk, threads);
    const double t1 = now_s();

    ReconClock recon;
    recon.on = opt.times != nullptr;
    run_blocks(m, n, k, Fp32Step{pa, pb, reconstruct_kernels(), &recon}, microkernels_for(opt.backend), scratch, threads,
               write);
    if (opt.times) {
        opt.times->split_pack_s = t1 - t0;
        opt.times->compute_s = now_s() - t1;
        const Blocking bl(m, n, k);
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
    WorkspaceLease ws;
    PackedOperand pa, pb;
    char* scratch = nullptr;
    double split_pack_s = 0;
};

PreparedDgemm::PreparedDgemm() = default;
PreparedDgemm::~PreparedDgemm() = default;
PreparedDgemm::PreparedDgemm(PreparedDgemm&&) noexcept = default;
PreparedDgemm& PreparedDgemm::operator=(PreparedDgemm&&) noexcept = default;

const char* prepare_fp64_gemm(const OperandView<double>& va, const OperandView<double>& vb, int m, int n, int k,
                              const RunOptions& opt, BlockWriter<double> write, PreparedDgemm* out) {
    out->state.reset();
    if (const char* why = check_backend(opt)) return why;
    Fp64Product sched[kMaxFp64Products];
    if (fp64_schedule(opt.fp64_products, sched) == 0) return reason::config_fp64_products;
    auto st = std::make_unique<PreparedDgemm::State>();
    st->m = m;
    st->n = n;
    st->k = k;
    st->write = std::move(write);
    st->opt = opt;
    st->threads = clamp_threads(opt.threads);
    const int threads = st->threads;

    // The first scales need no workspace: nonfinite input fails before any allocation.
    const double t0 = now_s();
    const SplitKernels& sk = split_kernels();
    Fp64Scales sa, sb;
    if (const char* why = fp64_first_scale(va, sk, threads, &sa)) return why;
    if (const char* why = fp64_first_scale(vb, sk, threads, &sb)) return why;

    if (const char* why = lease_workspace(dgemm_workspace_bytes(m, n, k, threads), opt.workspace_cap_bytes, &st->ws))
        return why;
    st->scratch = lay_out(static_cast<char*>(st->ws.data()), m, n, k, kFp64Slices, &st->pa, &st->pb);
    if (const char* why = split_pack_a_fp64(va, &sa, st->pa, sk, threads)) return why;
    if (const char* why = split_pack_b_fp64(vb, &sb, st->pb, sk, threads)) return why;
    // The pre-scan bounds the slice exponents from above (v(r) <= v(0) - 9r); a residual that
    // shrinks faster gives finer slices whose products can fall below 2^-126 and be flushed.
    // The caller checks that on these facts before compute_dgemm (policy/domain.h).
    out->a = split_facts(sa);
    out->b = split_facts(sb);
    st->split_pack_s = now_s() - t0;
    out->state = std::move(st);
    return nullptr;
}

namespace {

const char* dgemm_compute(PreparedDgemm* p, int products) {
    if (!p || !p->state) return reason::config_fp64_products;
    Fp64Product sched[kMaxFp64Products];
    const int np = fp64_schedule(products, sched);
    if (np == 0) return reason::config_fp64_products;
    PreparedDgemm::State& st = *p->state;
    const double t1 = now_s();
    ReconClock recon;
    recon.on = st.opt.times != nullptr;
    run_blocks(st.m, st.n, st.k, Fp64Step{st.pa, st.pb, sched, np, reconstruct_kernels(), &recon}, microkernels_for(st.opt.backend),
               st.scratch, st.threads, st.write);
    if (st.opt.times) {
        st.opt.times->split_pack_s = st.split_pack_s;
        st.opt.times->compute_s = now_s() - t1;
        const Blocking bl(st.m, st.n, st.k);
        st.opt.times->reconstruct_s = recon.seconds(st.threads, bl.mblocks * bl.nblocks);
    }
    return nullptr;
}

}  // namespace

std::size_t sgemm_workspace_bytes(int m, int n, int k, int threads) {
    return component_bytes(m, n, k, kFp32Slices) + std::size_t(clamp_threads(threads)) * thread_scratch_bytes<float>();
}

std::size_t dgemm_workspace_bytes(int m, int n, int k, int threads) {
    return component_bytes(m, n, k, kFp64Slices) + std::size_t(clamp_threads(threads)) * thread_scratch_bytes<double>();
}

namespace {

// No exception may reach a C or Fortran caller; nothing below throws by design, this is the
// last line of defence.
template <typename Fn>
const char* guarded(Fn&& fn) {
    try {
        return fn();
    } catch (const std::bad_alloc&) {
        return reason::memory_alloc_failed;
    } catch (...) {
        return reason::internal_exception;
    }
}

}  // namespace

const char* emulate_sgemm(const GemmArgs<float>& g, const RunOptions& opt) {
    return guarded([&] {
        return run_fp32_gemm({normalise_trans(g.transa), g.m, g.k, g.a, g.lda},
                             {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, g.m, g.n, g.k, opt,
                             [&g](int i0, int j0, const float* acc) { write_block(g, i0, j0, acc); });
    });
}

const char* prepare_dgemm(const GemmArgs<double>& g, const RunOptions& opt, PreparedDgemm* out) {
    // The writer keeps its own copy of the arguments: it runs in compute_dgemm.
    const char* why = guarded([&] {
        return prepare_fp64_gemm({normalise_trans(g.transa), g.m, g.k, g.a, g.lda},
                                 {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, g.m, g.n, g.k, opt,
                                 [g](int i0, int j0, const double* acc) { write_block(g, i0, j0, acc); }, out);
    });
    if (why) out->state.reset();  // a failed prepare frees its workspace at once
    return why;
}

const char* compute_dgemm(PreparedDgemm* prepared, int products) {
    return guarded([&] { return dgemm_compute(prepared, products); });
}

}  // namespace amxblas::kernels

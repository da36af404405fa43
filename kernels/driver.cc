// The blocked driver (paper Sections 6.1-6.3) and the two entry points.
//
//   for each BM x BN output block (handed out one at a time to the threads: kernels/thread_pool.h)
//     for each BK panel
//       for each 32x32 micro-tile
//         FP32: one fused six-product chain -> tile; block accumulator (FP32) += tile
//         FP64: for each product (i, j), i + j < d, smallest first (index sum descending):
//               one product -> tile; block accumulator (FP64) += widen(tile) * 2^(vA_i + vB_j)
//     C := alpha * accumulator + beta * C   (FP64: accumulator * 2^(e_i + f_j) first;
//                                            beta == 0: C is not read)
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
#include <stdlib.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "kernels/backend.h"
#include "kernels/emulated_gemm.h"
#include "kernels/fp64_certificate.h"
#include "kernels/pack.h"
#include "kernels/thread_pool.h"

namespace amxblas::kernels {
namespace {

constexpr std::size_t kAlign = 64;
constexpr int kTilesPerBlock = kBlockM / kTile;  // 8 micro-tiles per block side
constexpr int kStepsPerPanel = kBlockK / kTile;  // 8 K steps per BK panel

std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

std::size_t component_bytes(int m, int n, int k, int slices) {
    return align_up(packed_slice_elems(m, k) * sizeof(bf16_t)) * slices +
           align_up(packed_slice_elems(n, k) * sizeof(bf16_t)) * slices;
}

// Per thread: the BM x BN block accumulator and one 32x32 FP32 micro-tile.
template <typename Acc>
std::size_t thread_scratch_bytes() {
    return align_up(std::size_t(kBlockM) * kBlockN * sizeof(Acc)) + align_up(kStepElems * sizeof(float));
}

char normalise_trans(char t) { return (t == 'N' || t == 'n') ? 'N' : 'T'; }

// One 64-byte aligned allocation for the whole call, freed on every path.
struct Workspace {
    void* p = nullptr;
    ~Workspace() { free(p); }
};

// A fresh workspace is first touched by the packer, one page fault per 4 KiB page: at N = 2048
// that cost more than the split itself. Large workspaces are therefore 2 MiB aligned and
// advised as transparent huge pages (a hint: where THP is off, nothing changes).
constexpr std::size_t kHugePage = std::size_t(2) << 20;

const char* allocate(std::size_t bytes, std::size_t cap, Workspace* ws) {
    if (cap != 0 && bytes > cap) return "memory:workspace-cap";
    const bool huge = bytes >= 4 * kHugePage;
    if (posix_memalign(&ws->p, huge ? kHugePage : kAlign, bytes) != 0) {
        ws->p = nullptr;
        return "memory:alloc-failed";
    }
    if (huge) madvise(ws->p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
    return nullptr;
}

// Carves the slice buffers of A then B out of the workspace; returns the first byte after.
char* lay_out(char* base, int m, int n, int k, int slices, PackedOperand* pa, PackedOperand* pb) {
    const std::size_t sa = align_up(packed_slice_elems(m, k) * sizeof(bf16_t));
    const std::size_t sb = align_up(packed_slice_elems(n, k) * sizeof(bf16_t));
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
    if (!backend_built(opt.backend)) return "backend:not-built";
    if (!backend_usable(opt.backend)) return "backend:not-runnable";
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

struct Fp64Product {
    int i, j;
};

// The retained products (i, j), i + j < d, smallest first: index sum descending, i descending
// within a diagonal (the reverse of Algorithm 2's order).
int fp64_schedule(int products, Fp64Product* out) {
    const int d = fp64_depth(products);
    int q = 0;
    for (int diag = d - 1; diag >= 0; --diag)
        for (int i = diag; i >= 0; --i) out[q++] = {i, diag - i};
    return q;
}

int clamp_threads(int t) { return t < 1 ? 1 : t; }

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

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

// FP64 write-back: C(i, j) := alpha * (acc * 2^(e_i + f_j)) + beta * C(i, j) over the valid
// part of one block (beta == 0 never reads C).
void write_block_fp64(const GemmArgs<double>& g, int i0, int j0, const double* acc, const int* row_exps,
                      const int* col_exps) {
    const int rows = std::min(kBlockM, g.m - i0), cols = std::min(kBlockN, g.n - j0);
    for (int j = 0; j < cols; ++j) {
        double* c = g.c + i0 + std::size_t(j0 + j) * g.ldc;
        const int f = col_exps[j0 + j];
        if (g.beta == 0.0) {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * scale_pow2(acc[i * kBlockN + j], row_exps[i0 + i] + f);
        } else {
            for (int i = 0; i < rows; ++i)
                c[i] = g.alpha * scale_pow2(acc[i * kBlockN + j], row_exps[i0 + i] + f) + g.beta * c[i];
        }
    }
}

const char* sgemm(const GemmArgs<float>& g, const RunOptions& opt) {
    if (const char* why = check_backend(opt)) return why;
    const int threads = clamp_threads(opt.threads);
    Workspace ws;
    if (const char* why = allocate(sgemm_workspace_bytes(g.m, g.n, g.k, threads), opt.workspace_cap_bytes, &ws))
        return why;
    PackedOperand pa, pb;
    char* scratch = lay_out(static_cast<char*>(ws.p), g.m, g.n, g.k, kFp32Slices, &pa, &pb);

    const double t0 = now_s();
    const SplitKernels& sk = split_kernels();
    pack_a_fp32({normalise_trans(g.transa), g.m, g.k, g.a, g.lda}, pa, sk, threads);
    pack_b_fp32({normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, pb, sk, threads);
    const double t1 = now_s();

    const MicroKernels mk = microkernels_for(opt.backend);
    const Blocking bl(g.m, g.n, g.k);
    for_each_block<float>(threads, bl, scratch, mk, [&](int ib, int jb, float* acc, float* tile) {
        const int ti_end = std::min(kTilesPerBlock, bl.mtiles - ib * kTilesPerBlock);
        const int tj_end = std::min(kTilesPerBlock, bl.ntiles - jb * kTilesPerBlock);
        for (int kb = 0; kb < bl.panels; ++kb) {
            const int s0 = kb * kStepsPerPanel, ns = std::min(kStepsPerPanel, bl.ksteps - s0);
            for (int ti = 0; ti < ti_end; ++ti)
                for (int tj = 0; tj < tj_end; ++tj) {
                    const int pi = ib * kTilesPerBlock + ti, pj = jb * kTilesPerBlock + tj;
                    Fp32Panels p;
                    for (int s = 0; s < kFp32Slices; ++s) {
                        p.a[s] = pa.block(s, pi, s0);
                        p.b[s] = pb.block(s, pj, s0);
                    }
                    float* dst = acc + ti * kTile * kBlockN + tj * kTile;
                    if (kb == 0) {
                        mk.fp32_chain(ns, p, dst, kBlockN);  // first panel: store in place
                        continue;
                    }
                    mk.fp32_chain(ns, p, tile, kTile);
                    for (int r = 0; r < kTile; ++r)
                        for (int c = 0; c < kTile; ++c) dst[r * kBlockN + c] += tile[r * kTile + c];
                }
        }
        write_block(g, ib * kBlockM, jb * kBlockN, acc);
    });
    if (opt.times) {
        opt.times->split_pack_s = t1 - t0;
        opt.times->compute_s = now_s() - t1;
    }
    return nullptr;
}

// The FP64 products sched[0..live-1] (product q scaled by pscale[q]) over every output block;
// write(i0, j0, acc) receives each finished BM x BN accumulator (row stride kBlockN).
template <typename Write>
void fp64_products(const Blocking& bl, const MicroKernels& mk, const PackedOperand& pa, const PackedOperand& pb,
                   const Fp64Product* sched, const double* pscale, int live, char* scratch, int threads,
                   Write&& write) {
    for_each_block<double>(threads, bl, scratch, mk, [&](int ib, int jb, double* acc, float* tile) {
        const int ti_end = std::min(kTilesPerBlock, bl.mtiles - ib * kTilesPerBlock);
        const int tj_end = std::min(kTilesPerBlock, bl.ntiles - jb * kTilesPerBlock);
        for (int r = 0; r < ti_end * kTile; ++r) std::memset(acc + r * kBlockN, 0, sizeof(double) * tj_end * kTile);
        for (int kb = 0; kb < bl.panels; ++kb) {
            const int s0 = kb * kStepsPerPanel, ns = std::min(kStepsPerPanel, bl.ksteps - s0);
            for (int ti = 0; ti < ti_end; ++ti)
                for (int tj = 0; tj < tj_end; ++tj) {
                    const int pi = ib * kTilesPerBlock + ti, pj = jb * kTilesPerBlock + tj;
                    double* dst = acc + ti * kTile * kBlockN + tj * kTile;
                    for (int q = 0; q < live; ++q) {
                        mk.product(ns, pa.block(sched[q].i, pi, s0), pb.block(sched[q].j, pj, s0), tile, kTile);
                        const double ps = pscale[q];
                        for (int r = 0; r < kTile; ++r)
                            for (int c = 0; c < kTile; ++c)
                                dst[r * kBlockN + c] += static_cast<double>(tile[r * kTile + c]) * ps;
                    }
                }
        }
        write(ib * kBlockM, jb * kBlockN, acc);
    });
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

Fp64OperandBound operand_bound(const Fp64Split& sp, int outer, const unsigned char* zero) {
    Fp64OperandBound ob;
    ob.outer = outer;
    ob.slices = sp.sc.slices;
    ob.active = sp.sc.active;
    for (int r = 0; r < sp.sc.active; ++r) ob.v[r] = ozaki_v(sp.sc.sigma[r]);
    fp64_residual_bounds(sp.resid, sp.sc.slices, sp.subnormal_scaled, ob.rho);
    ob.norms = sp.norms;
    ob.zero = zero;
    return ob;
}

// A copy of slice 0 with the sign bits cleared: |Z_0| for the certificate's lower bound.
void abs_slice(const PackedOperand& src, bf16_t* dst) {
    const std::size_t elems = std::size_t(src.panels) * src.ksteps * kStepElems;
    for (std::size_t q = 0; q < elems; ++q) dst[q] = src.slice[0][q] & 0x7FFF;
}

// Entries the certificate could not vouch for: recomputed as FP64 inner products in index
// order, the computation DGEMM's own error bound describes. Each gets C := alpha * dot +
// beta * c_old (c_old saved before C was written).
struct Repairs {
    std::vector<std::size_t> at;  // i + j * m
    std::vector<double> c_old;
};

void save_repairs(const GemmArgs<double>& g, Repairs* r) {
    r->c_old.resize(r->at.size());
    for (std::size_t q = 0; q < r->at.size(); ++q) {
        const int i = int(r->at[q] % std::size_t(g.m)), j = int(r->at[q] / std::size_t(g.m));
        r->c_old[q] = g.beta == 0.0 ? 0.0 : g.c[i + std::size_t(j) * g.ldc];
    }
}

void apply_repairs(const GemmArgs<double>& g, const OperandView<double>& va, const OperandView<double>& vb,
                   const Repairs& r, int threads) {
    const auto at = [](const OperandView<double>& v, int row, int col) {
        return v.trans == 'N' ? v.x[row + std::size_t(col) * v.ld] : v.x[col + std::size_t(row) * v.ld];
    };
    parallel_for(threads, int(r.at.size()), [&](int q, int) {
        const int i = int(r.at[q] % std::size_t(g.m)), j = int(r.at[q] / std::size_t(g.m));
        double dot = 0;
        for (int l = 0; l < g.k; ++l) dot += at(va, i, l) * at(vb, l, j);
        double* c = g.c + i + std::size_t(j) * g.ldc;
        *c = g.beta == 0.0 ? g.alpha * dot : g.alpha * dot + g.beta * r.c_old[q];
    });
}

const char* dgemm(const GemmArgs<double>& g, const RunOptions& opt) {
    if (const char* why = check_backend(opt)) return why;
    const bool automatic = opt.fp64_products == kFp64Auto;
    Fp64Product sched[kFp64MaxProducts];
    const int slices = automatic ? kFp64Slices : fp64_depth(opt.fp64_products);
    if (slices == 0) return "config:fp64-products";
    const int threads = clamp_threads(opt.threads);

    // The exponent scans need no workspace: nonfinite input fails before any allocation.
    const double t0 = now_s();
    const SplitKernels& sk = split_kernels();
    const OperandView<double> va{normalise_trans(g.transa), g.m, g.k, g.a, g.lda};
    const OperandView<double> vb{normalise_trans(g.transb), g.k, g.n, g.b, g.ldb};
    std::vector<int> row_exps(std::size_t(g.m)), col_exps(std::size_t(g.n));
    std::vector<unsigned char> row_zero, col_zero;
    if (automatic) row_zero.resize(std::size_t(g.m)), col_zero.resize(std::size_t(g.n));
    bool a_nonzero = false, b_nonzero = false;
    if (const char* why = fp64_outer_exponents(va, true, threads, row_exps.data(), &a_nonzero,
                                               automatic ? row_zero.data() : nullptr))
        return why;
    if (const char* why = fp64_outer_exponents(vb, false, threads, col_exps.data(), &b_nonzero,
                                               automatic ? col_zero.data() : nullptr))
        return why;

    Workspace ws;
    const std::size_t bytes = automatic ? dgemm_auto_workspace_bytes(g.m, g.n, g.k, threads)
                                        : dgemm_workspace_bytes(g.m, g.n, g.k, threads, opt.fp64_products);
    if (const char* why = allocate(bytes, opt.workspace_cap_bytes, &ws)) return why;
    PackedOperand pa, pb;
    char* scratch = lay_out(static_cast<char*>(ws.p), g.m, g.n, g.k, slices, &pa, &pb);
    Fp64Split sa, sb;
    std::vector<double> norms_a, norms_b;
    if (automatic) {
        norms_a.resize(std::size_t(slices) * g.m);
        norms_b.resize(std::size_t(slices) * g.n);
        sa.norms = norms_a.data();
        sb.norms = norms_b.data();
    }
    if (const char* why = split_pack_a_fp64(va, row_exps.data(), a_nonzero, &sa, pa, sk, threads)) return why;
    if (const char* why = split_pack_b_fp64(vb, col_exps.data(), b_nonzero, &sb, pb, sk, threads)) return why;
    const double t1 = now_s();

    const MicroKernels mk = microkernels_for(opt.backend);
    const Blocking bl(g.m, g.n, g.k);
    int products = opt.fp64_products;
    Repairs repairs;
    if (automatic) {
        // The certificate's lower bound of |A||B|: one BF16 product of |Z_0^A| and |Z_0^B|,
        // exact per panel like every other product, summed over panels in FP64.
        const std::size_t sa_bytes = align_up(packed_slice_elems(g.m, g.k) * sizeof(bf16_t));
        const std::size_t sb_bytes = align_up(packed_slice_elems(g.n, g.k) * sizeof(bf16_t));
        char* extra = scratch + std::size_t(threads) * thread_scratch_bytes<double>();
        PackedOperand abs_a = pa, abs_b = pb;
        abs_a.slice[0] = reinterpret_cast<bf16_t*>(extra);
        abs_b.slice[0] = reinterpret_cast<bf16_t*>(extra + sa_bytes);
        double* lhat = reinterpret_cast<double*>(extra + sa_bytes + sb_bytes);
        abs_slice(pa, abs_a.slice[0]);
        abs_slice(pb, abs_b.slice[0]);
        const Fp64Product lower[1] = {{0, 0}};
        const double one[1] = {1.0};
        if (sa.sc.active > 0 && sb.sc.active > 0) {
            fp64_products(bl, mk, abs_a, abs_b, lower, one, 1, scratch, threads, [&](int i0, int j0, const double* acc) {
                const int rows = std::min(kBlockM, g.m - i0), cols = std::min(kBlockN, g.n - j0);
                for (int j = 0; j < cols; ++j)
                    for (int i = 0; i < rows; ++i) lhat[i0 + i + std::size_t(j0 + j) * g.m] = acc[i * kBlockN + j];
            });
        } else {
            std::fill(lhat, lhat + std::size_t(g.m) * g.n, 0.0);
        }
        Fp64Certificate cert;
        const Fp64OperandBound ba = operand_bound(sa, g.m, row_zero.data()), bb = operand_bound(sb, g.n, col_zero.data());
        if (!fp64_certify(ba, bb, g.k, lhat, g.m, opt.fp64_tol, 3, threads, &cert)) return "accuracy:uncertified";
        if (cert.failing > fp64_repair_limit(g.m, g.n)) return "accuracy:uncertified";
        products = cert.depth * (cert.depth + 1) / 2;
        repairs.at = std::move(cert.fail_at);
        save_repairs(g, &repairs);
        if (opt.fp64_report) {
            opt.fp64_report->products = products;
            opt.fp64_report->margin = cert.margin;
            opt.fp64_report->repaired = cert.failing;
        }
    }
    const int np = fp64_schedule(products, sched);
    double pscale[kFp64MaxProducts];
    const int live = live_products(sa.sc, sb.sc, sched, np, pscale);
    const double t2 = now_s();

    fp64_products(bl, mk, pa, pb, sched, pscale, live, scratch, threads, [&](int i0, int j0, const double* acc) {
        write_block_fp64(g, i0, j0, acc, row_exps.data(), col_exps.data());
    });
    if (!repairs.at.empty()) apply_repairs(g, va, vb, repairs, threads);
    if (opt.times) {
        opt.times->split_pack_s = t1 - t0;
        opt.times->certificate_s = t2 - t1;
        opt.times->compute_s = now_s() - t2;
    }
    return nullptr;
}

}  // namespace

std::size_t sgemm_workspace_bytes(int m, int n, int k, int threads) {
    return component_bytes(m, n, k, kFp32Slices) + std::size_t(clamp_threads(threads)) * thread_scratch_bytes<float>();
}

int fp64_depth(int products) {
    switch (products) {
        case 6: return 3;
        case 10: return 4;
        case 15: return 5;
        case 21: return 6;
        case 28: return 7;
        case 36: return 8;
        default: return 0;
    }
}

std::size_t dgemm_workspace_bytes(int m, int n, int k, int threads, int products) {
    return component_bytes(m, n, k, fp64_depth(products)) +
           std::size_t(clamp_threads(threads)) * thread_scratch_bytes<double>();
}

std::size_t dgemm_auto_workspace_bytes(int m, int n, int k, int threads) {
    return component_bytes(m, n, k, kFp64Slices) + std::size_t(clamp_threads(threads)) * thread_scratch_bytes<double>() +
           component_bytes(m, n, k, 1) + align_up(std::size_t(m) * n * sizeof(double));
}

long fp64_repair_limit(int m, int n) {
    // A repaired entry costs K scalar multiply-adds; up to 1/16 of the entries keeps that below
    // the routed products' work.
    return long(m) * n / 16;
}

// No exception may reach a C or Fortran caller; nothing below throws by design, this is the
// last line of defence.
const char* emulate_sgemm(const GemmArgs<float>& args, const RunOptions& opt) {
    try {
        return sgemm(args, opt);
    } catch (const std::bad_alloc&) {
        return "memory:alloc-failed";
    } catch (...) {
        return "internal:exception";
    }
}

const char* emulate_dgemm(const GemmArgs<double>& args, const RunOptions& opt) {
    try {
        return dgemm(args, opt);
    } catch (const std::bad_alloc&) {
        return "memory:alloc-failed";
    } catch (...) {
        return "internal:exception";
    }
}

}  // namespace amxblas::kernels

// The FP64 method (blocked_gemm.h, emulated_gemm.h): the product schedule, the FP64 step of the
// macro-kernel, the prepared state, prepare_fp64_gemm and compute_dgemm (DGEMM, ZGEMM).
//
// The FP64 accumulation runs smallest product first, so that before the leading product (0, 0)
// of a panel is added the partial sums are small: for K <= 256 the rounding error is then close
// to one rounding of the result (docs/fp64-certificate.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/common/variants.h"
#include "kernels/driver/macro_kernel.h"
#include "kernels/driver/prepared_dgemm_state.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {
namespace {

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

int fp64_depth(int products) {
    const Variant* v = fp64_variant(products);
    return v ? v->depth : 0;
}

const char* compute_dgemm(PreparedDgemm* prepared, int products, const std::size_t* repair_at, std::size_t repairs) {
    return guarded([&] { return dgemm_compute(prepared, products, repair_at, repairs); });
}

}  // namespace amxblas::kernels

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
#include "kernels/driver/fp64_facts.h"
#include "kernels/driver/macro_kernel.h"
#include "kernels/driver/prepared_dgemm_state.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/pack/pack_fp64.h"
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

// The chunk packer of one operand of a prepared call (run_chunks): its chunks split with the
// scales the prepare found, `slices` of them (the slices past those a product uses need not be
// split: the split is sequential, so each slice is the same whatever follows it); with abs,
// slice 0 only, its sign bits cleared: |Z_0| for the certificate's lower bound.
template <bool IsA>
struct Fp64ChunkPacker {
    const PreparedDgemm::State& st;
    Fp64Scales sc;
    bool abs;
    Fp64ChunkPacker(const PreparedDgemm::State& s, int slices, bool abs_slice0)
        : st(s), sc(IsA ? s.sa.sc : s.sb.sc), abs(abs_slice0) {
        sc.slices = slices;
        sc.active = std::min(sc.active, slices);
        set_slice_norms(&sc);
    }
    void operator()(int o0, int outer, int k0, int kc, const PackedOperand& out) const {
        if (IsA) pack_fp64<true>(sub_view(st.va, o0, outer, k0, kc), st.row_exps.data() + o0, sc, out, split_kernels(), st.threads);
        else pack_fp64<false>(sub_view(st.vb, k0, kc, o0, outer), st.col_exps.data() + o0, sc, out, split_kernels(), st.threads);
        if (!abs) return;
        const std::size_t panel_elems = std::size_t(out.ksteps) * out.block_elems;
        parallel_for(st.threads, out.panels, [&](int p, int) {
            bf16_t* z = out.slice[0] + std::size_t(p) * panel_elems;
            for (std::size_t q = 0; q < panel_elems; ++q) z[q] &= 0x7FFF;
        });
    }
};

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
    if (const char* why = check_backend(opt)) return why;
    const bool automatic = opt.fp64_products == kFp64Auto;
    const int slices = automatic ? kFp64Slices : fp64_depth(opt.fp64_products);
    if (slices == 0) return reason::config_fp64_products;
    auto st = std::make_unique<PreparedDgemm::State>();
    st->m = m;
    st->n = n;
    st->k = k;
    st->va = va;
    st->vb = vb;
    st->write = std::move(write);
    st->opt = opt;
    st->threads = clamp_threads(opt.threads);
    st->mk = kernels_for(opt);
    const int threads = st->threads;
    const Blocking bl(st->mk.geometry, m, n, k, threads);
    st->chunking = chunking_for(bl, m, n, k, slices, sizeof(double), threads, opt);
    const Chunking& ch = st->chunking;

    // The exponents of both operands first: an Inf or NaN is reported before any other reason.
    const double t0 = now_s();
    st->row_exps.resize(std::size_t(m));
    st->col_exps.resize(std::size_t(n));
    if (automatic) {
        st->row_zero.resize(std::size_t(m));
        st->col_zero.resize(std::size_t(n));
    }
    bool a_nonzero = false, b_nonzero = false;
    if (const char* why = fp64_outer_exponents(va, true, threads, st->row_exps.data(), &a_nonzero,
                                               automatic ? st->row_zero.data() : nullptr))
        return why;
    if (const char* why = fp64_outer_exponents(vb, false, threads, st->col_exps.data(), &b_nonzero,
                                               automatic ? st->col_zero.data() : nullptr))
        return why;

    if (const char* why = lease_workspace(chunk_workspace_bytes(bl, ch, slices, sizeof(double), threads),
                                          opt.workspace_cap_bytes, &st->ws))
        return why;
    st->cw = lay_out(static_cast<char*>(st->ws.data()), bl, ch, slices, sizeof(double));
    if (automatic) {
        st->norms_a.resize(std::size_t(slices) * m);
        st->norms_b.resize(std::size_t(slices) * n);
        st->sa.norms = st->norms_a.data();
        st->sb.norms = st->norms_b.data();
    }
    const SplitKernels& sk = split_kernels();
    if (const char* why = fp64_split_facts(true, va, st->row_exps.data(), a_nonzero, &st->sa, st->cw.pa, ch.mc, ch.kc, sk, threads))
        return why;
    if (const char* why = fp64_split_facts(false, vb, st->col_exps.data(), b_nonzero, &st->sb, st->cw.pb, ch.nc, ch.kc, sk, threads))
        return why;
    out->a = split_facts(st->sa, m, automatic ? st->row_zero.data() : nullptr);
    out->b = split_facts(st->sb, n, automatic ? st->col_zero.data() : nullptr);
    st->split_pack_s = now_s() - t0;

    out->state = std::move(st);
    return nullptr;
}

bool lower_bound_blocks(PreparedDgemm* prepared, const LowerBlockVisitor& visit) {
    if (!prepared || !prepared->state || prepared->state->opt.fp64_products != kFp64Auto) return false;
    PreparedDgemm::State& st = *prepared->state;
    // One BF16 product of |Z_0^A| and |Z_0^B|, exact per panel like every other product,
    // summed over the panels in FP64 (zero where an operand is: its slices are).
    const Fp64Product first[1] = {{0, 0}};
    const double one[1] = {1.0};
    ReconClock no_clock;
    const Blocking bl(st.mk.geometry, st.m, st.n, st.k, st.threads);
    run_chunks(st.m, st.n, st.k, Fp64Step{st.cw.pa, st.cw.pb, reconstruct_kernels(), first, one, 1, nullptr, nullptr, &no_clock},
               st.cw, Fp64ChunkPacker<true>(st, 1, true), Fp64ChunkPacker<false>(st, 1, true), st.mk, bl, st.chunking,
               st.threads, visit);
    return true;
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
    const Blocking bl(st.mk.geometry, st.m, st.n, st.k, st.threads);
    double pack_s = 0;
    const auto timed = [&pack_s](const auto& pack) {
        return [&pack_s, &pack](int o0, int outer, int k0, int kc, const PackedOperand& out) {
            const double t0 = now_s();
            pack(o0, outer, k0, kc, out);
            pack_s += now_s() - t0;
        };
    };
    const Fp64ChunkPacker<true> pack_a(st, fp64_depth(products), false);
    const Fp64ChunkPacker<false> pack_b(st, fp64_depth(products), false);
    run_chunks(st.m, st.n, st.k, Fp64Step{st.cw.pa, st.cw.pb, reconstruct_kernels(), sched, pscale, live, st.row_exps.data(), st.col_exps.data(), &recon},
               st.cw, timed(pack_a), timed(pack_b), st.mk, bl, st.chunking, st.threads, st.write);
    if (finish_repairs) finish_repairs(st.threads);
    if (st.opt.times) {
        st.opt.times->split_pack_s = st.split_pack_s + pack_s;
        st.opt.times->compute_s = now_s() - t1 - pack_s;
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

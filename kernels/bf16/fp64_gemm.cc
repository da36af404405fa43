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
#include "kernels/bf16/fp64_facts.h"
#include "kernels/bf16/macro_kernel.h"
#include "kernels/bf16/prepared_dgemm_state.h"
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

// dst := slice 0 of the packed operand p with its sign bits cleared (|Z_0|), one panel a task.
void abs_copy(const PackedOperand& p, bf16_t* dst, int threads) {
    const std::size_t panel_elems = std::size_t(p.ksteps) * p.block_elems;
    parallel_for(threads, p.panels, [&](int q, int) {
        const bf16_t* from = p.slice[0] + std::size_t(q) * panel_elems;
        bf16_t* to = dst + std::size_t(q) * panel_elems;
        for (std::size_t e = 0; e < panel_elems; ++e) to[e] = from[e] & 0x7FFF;
    });
}

// The chunk packer of one operand of a prepared call (run_chunks): its chunks split with the
// scales the prepare found, `slices` of them (the slices past those a product uses need not be
// split: the split is sequential, so each slice is the same whatever follows it); with abs,
// slice 0 only, its sign bits cleared: |Z_0| for the certificate's lower bound.
// With `track` (a speculative compute), the scales are guessed ones and the pass's residual
// maxima and worst slice-range reason are gathered there, chunk by chunk.
struct PassTrack {
    double resid[kFp64Slices + 1] = {};
    const char* why = nullptr;
};

template <bool IsA>
struct Fp64ChunkPacker {
    const PreparedDgemm::State& st;
    Fp64Scales sc;
    bool abs;
    PassTrack* track = nullptr;
    Fp64ChunkPacker(const PreparedDgemm::State& s, int slices, bool abs_slice0)
        : st(s), sc(IsA ? s.sa.sc : s.sb.sc), abs(abs_slice0) {
        sc.slices = slices;
        sc.active = std::min(sc.active, slices);
        set_slice_norms(&sc);
    }
    Fp64ChunkPacker(const PreparedDgemm::State& s, const Fp64Scales& guess, PassTrack* t)
        : st(s), sc(guess), abs(false), track(t) {}
    void operator()(int o0, int outer, int k0, int kc, const PackedOperand& out) const {
        double resid[kFp64Slices + 1];
        double* r = track ? resid : nullptr;
        const char* why =
            IsA ? pack_fp64<true>(sub_view(st.va, o0, outer, k0, kc), st.row_exps.data() + o0, sc, out, split_kernels(), st.threads, r)
                : pack_fp64<false>(sub_view(st.vb, k0, kc, o0, outer), st.col_exps.data() + o0, sc, out, split_kernels(), st.threads, r);
        if (abs) abs_copy(out, out.slice[0], st.threads);
        if (!track) return;
        for (int t = 0; t <= kFp64Slices; ++t) track->resid[t] = std::max(track->resid[t], resid[t]);
        if (why && !track->why) track->why = why;
    }
};

// The facts pass over both operands (fp64_facts.h) into st.sa and st.sb, in the chunk buffers.
const char* operand_facts(PreparedDgemm::State& st) {
    ++st.facts_passes;
    const SplitKernels& sk = split_kernels();
    PackedOperand fa = st.cw.pa, fb = st.cw.pb;
    fa.slices = fb.slices = st.sa.sc.slices;
    const Chunking& ch = st.chunking;
    if (const char* why = fp64_split_facts(true, st.va, st.row_exps.data(), st.a_nonzero, &st.sa, fa, ch.mc, ch.kc, sk, st.threads))
        return why;
    return fp64_split_facts(false, st.vb, st.col_exps.data(), st.b_nonzero, &st.sb, fb, ch.nc, ch.kc, sk, st.threads);
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
    if (const char* why = check_backend(opt)) return why;
    const bool automatic = opt.fp64_products == kFp64Auto;
    const int slices = automatic ? std::clamp(opt.fp64_auto_depth, 3, kFp64Slices) : fp64_depth(opt.fp64_products);
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
    const int slots = automatic ? kFp64AutoSlots : slices;
    st->chunking = chunking_for(bl, m, n, k, slots, sizeof(double), threads, opt);
    const Chunking& ch = st->chunking;
    st->single = single_chunk(ch, m, n, k);
    // A fixed count in several chunks guesses the scales instead of running the facts pass
    // (dgemm_compute): on one super-block it splits each chunk once, with the guessed scales,
    // as the products need it, and checks the guess before writing C; on several it checks the
    // guess on the first chunks (settle_scales). Only a wrong guess costs the facts pass.
    st->speculative = !automatic && !st->single;

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

    if (const char* why = lease_workspace(chunk_workspace_bytes(bl, ch, slots, sizeof(double), threads),
                                          opt.workspace_cap_bytes, &st->ws))
        return why;
    st->cw = lay_out(static_cast<char*>(st->ws.data()), bl, ch, slots, sizeof(double), threads);
    if (automatic) {  // room for all eight slices' norms: deepen_fp64_split may need them
        st->norms_a.resize(std::size_t(kFp64Slices) * m);
        st->norms_b.resize(std::size_t(kFp64Slices) * n);
        st->sa.norms = st->norms_a.data();
        st->sb.norms = st->norms_b.data();
    }
    // The facts of each operand, in the chunk buffers. A call in one chunk keeps what the last
    // pass packed: the slices of the scales found (speculate_scales), which compute_dgemm and
    // the lower bound then use as they are.
    st->a_nonzero = a_nonzero;
    st->b_nonzero = b_nonzero;
    st->sa.sc.slices = st->sb.sc.slices = slices;
    if (!st->speculative)
        if (const char* why = operand_facts(*st)) return why;
    if (st->single) {
        shape_chunk(&st->cw.pa, true, m, k);
        shape_chunk(&st->cw.pb, false, n, k);
    }
    // (Unset in a speculative call, which only auto's certificate would read.)
    out->a = split_facts(st->sa, m, automatic ? st->row_zero.data() : nullptr);
    out->b = split_facts(st->sb, n, automatic ? st->col_zero.data() : nullptr);
    st->split_pack_s = now_s() - t0;

    out->state = std::move(st);
    return nullptr;
}

const char* deepen_fp64_split(PreparedDgemm* prepared) {
    if (!prepared || !prepared->state || prepared->state->opt.fp64_products != kFp64Auto) return nullptr;
    PreparedDgemm::State& st = *prepared->state;
    if (st.sa.sc.slices == kFp64Slices) return nullptr;
    // The same facts pass, eight slices deep. The split is sequential, so the first slices,
    // their scales and norms, and with slice 0 the lower bound's |Z_0|, come out as before.
    st.sa.sc.slices = st.sb.sc.slices = kFp64Slices;
    if (const char* why = operand_facts(st)) return why;
    prepared->a = split_facts(st.sa, st.m, st.row_zero.data());
    prepared->b = split_facts(st.sb, st.n, st.col_zero.data());
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
    // In one chunk the slices are packed already: |Z_0| goes to the spare slot, once. Otherwise
    // each chunk's slice 0 is packed and its signs cleared in place.
    PackedOperand za = st.cw.pa, zb = st.cw.pb;
    if (st.single) {
        za.slice[0] = st.cw.pa.slice[kFp64Slices];
        zb.slice[0] = st.cw.pb.slice[kFp64Slices];
        if (!st.abs_ready) {
            abs_copy(st.cw.pa, za.slice[0], st.threads);
            abs_copy(st.cw.pb, zb.slice[0], st.threads);
            st.abs_ready = true;
        }
    }
    run_chunks(st.m, st.n, st.k, Fp64Step{za, zb, reconstruct_kernels(), first, one, 1, nullptr, nullptr, &no_clock}, st.cw,
               Fp64ChunkPacker<true>(st, 1, true), Fp64ChunkPacker<false>(st, 1, true), st.mk, bl, st.chunking, st.threads,
               visit, ChunkWalk{st.single, false});
    return true;
}

namespace {

// A fixed count on several super-blocks, before its products: op(A)'s and op(B)'s first chunks
// split with the guessed scales. When their residual maxima settle the guesses
// (ScaleSpeculation::settled_by_part) the scales are those of the facts pass, found at the cost
// of one chunk; else (data with few significant bits, or a first chunk unlike the rest) the
// facts pass runs. Returns its reason, or nullptr with st.sa.sc and st.sb.sc set.
const char* settle_scales(PreparedDgemm::State& st, double* pack_s) {
    const ScaleSpeculation spec_a(st.a_nonzero, st.sa.sc.slices), spec_b(st.b_nonzero, st.sb.sc.slices);
    const Chunking& ch = st.chunking;
    const int mc = std::min(ch.mc, st.m), nc = std::min(ch.nc, st.n), kc = std::min(ch.kc, st.k);
    PassTrack ta, tb;
    const double t0 = now_s();
    shape_chunk(&st.cw.pa, true, mc, kc);
    Fp64ChunkPacker<true>(st, spec_a.guess(), &ta)(0, mc, 0, kc, st.cw.pa);
    shape_chunk(&st.cw.pb, false, nc, kc);
    Fp64ChunkPacker<false>(st, spec_b.guess(), &tb)(0, nc, 0, kc, st.cw.pb);
    *pack_s += now_s() - t0;
    Fp64Scales fa, fb;
    if (ta.why || tb.why || !spec_a.settled_by_part(ta.resid, &fa) || !spec_b.settled_by_part(tb.resid, &fb))
        return operand_facts(st);
    st.sa.sc = fa;
    st.sb.sc = fb;
    return nullptr;
}

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
    ReconClock recon;
    recon.on = st.opt.times != nullptr;
    const Blocking bl(st.mk.geometry, st.m, st.n, st.k, st.threads);
    double pack_s = 0;
    const auto timed = [&pack_s](auto pack) {
        return [&pack_s, pack](int o0, int outer, int k0, int kc, const PackedOperand& out) {
            const double t0 = now_s();
            pack(o0, outer, k0, kc, out);
            pack_s += now_s() - t0;
        };
    };
    bool done = false;
    if (st.speculative && !one_super_block(st.chunking, st.m, st.n)) {
        st.speculative = false;
        if (const char* why = settle_scales(st, &pack_s)) return why;  // C untouched
    } else if (st.speculative) {
        st.speculative = false;  // either way the scales are known after this
        ScaleSpeculation spec_a(st.a_nonzero, st.sa.sc.slices), spec_b(st.b_nonzero, st.sb.sc.slices);
        const Fp64Scales ga = spec_a.guess(), gb = spec_b.guess();
        Fp64Product guessed[kMaxFp64Products];
        std::copy(sched, sched + np, guessed);
        double gscale[kMaxFp64Products];
        const int glive = live_products(ga, gb, guessed, np, gscale);
        PassTrack ta, tb;
        const Fp64Step step{st.cw.pa, st.cw.pb, reconstruct_kernels(), guessed, gscale, glive, st.row_exps.data(), st.col_exps.data(), &recon};
        run_chunks(st.m, st.n, st.k, step, st.cw, timed(Fp64ChunkPacker<true>(st, ga, &ta)), timed(Fp64ChunkPacker<false>(st, gb, &tb)),
                   st.mk, bl, st.chunking, st.threads, st.write, ChunkWalk{false, true});
        // Kept only when both guesses are the scales, chain ends included: then every slice,
        // product and sum is the one the found scales give.
        Fp64Scales fa, fb;
        if (!ta.why && !tb.why && spec_a.confirm(ta.resid, &fa) && spec_b.confirm(tb.resid, &fb) && fa.active == ga.active &&
            fb.active == gb.active) {
            st.sa.sc = fa;
            st.sb.sc = fb;
            write_held(st.m, st.n, step, st.cw, bl, st.threads, st.write);
            done = true;
        } else if (const char* why = operand_facts(st)) {
            return why;  // C untouched
        }
    }
    if (!done) {
        const int live = live_products(st.sa.sc, st.sb.sc, sched, np, pscale);
        run_chunks(st.m, st.n, st.k,
                   Fp64Step{st.cw.pa, st.cw.pb, reconstruct_kernels(), sched, pscale, live, st.row_exps.data(), st.col_exps.data(), &recon},
                   st.cw, timed(Fp64ChunkPacker<true>(st, fp64_depth(products), false)),
                   timed(Fp64ChunkPacker<false>(st, fp64_depth(products), false)), st.mk, bl, st.chunking, st.threads, st.write,
                   ChunkWalk{st.single, false});
    }
    if (finish_repairs) finish_repairs(st.threads);
    if (st.opt.times) {
        st.opt.times->split_pack_s = st.split_pack_s + pack_s;
        st.opt.times->compute_s = now_s() - t1 - pack_s;
        st.opt.times->reconstruct_s = recon.seconds(st.threads, bl.mblocks * bl.nblocks);
        st.opt.times->facts_passes = st.facts_passes;
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

#include "kernels/int8/int8_gemm.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "kernels/common/pow2.h"
#include "kernels/common/reasons.h"
#include "kernels/engine/guard.h"
#include "kernels/int8/crt_reconstruct.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/int8/int8_refine.h"
#include "kernels/int8/int8_walk.h"
#include "kernels/isa/isa.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {
namespace {

constexpr TileGeometry g = kAmxInt8Geometry;
static_assert(kInt8OutBlock == kBlockM && kInt8OutBlock == kBlockN, "int8_chunk_plan.h counts the writer's blocks");

// Runs body(i0, j0, rows, cols) over the kBlockM x kBlockN blocks of a super-block, on the
// pool's threads.
template <typename Body>
void for_each_out_block(int rows, int cols, int threads, Body&& body) {
    const int mb = (rows + kBlockM - 1) / kBlockM, nb = (cols + kBlockN - 1) / kBlockN;
    parallel_for(threads, mb * nb, [&](int q, int participant) {
        const int bi = (q / nb) * kBlockM, bj = (q % nb) * kBlockN;
        body(bi, bj, std::min(kBlockM, rows - bi), std::min(kBlockN, cols - bj), participant);
    });
}

// int8_chunking, made smaller where opt asks (RunOptions::chunk_rows, chunk_cols, chunk_depth:
// the tests that check that chunking changes no bit).
Int8Chunking chunking_for(const Fp64Gemm& call, int layers, bool sums, const RunOptions& opt) {
    Int8Chunking ch = int8_chunking(call.m, call.n, call.k, layers, sums, opt.threads);
    if (opt.chunk_rows > 0) ch.mc = std::min(ch.mc, round_up(opt.chunk_rows, g.mr));
    if (opt.chunk_cols > 0) ch.nc = std::min(ch.nc, round_up(opt.chunk_cols, g.nr));
    if (opt.chunk_depth > 0) ch.kc = std::min(ch.kc, round_up(opt.chunk_depth, g.kstep));
    ch.one_chunk = ch.kc >= call.k;
    return ch;
}

struct Facts {
    Int8OperandFacts a, b;
};

// The micro-kernels of opt's backend, with the portable INT8 product where the set has none
// for the packer's layout.
MicroKernels int8_kernels(const RunOptions& opt) {
    MicroKernels mk = kernels_for(opt);
    // The packer lays the residues out for kAmxInt8Geometry (int8_pack.h): a set without an
    // INT8 product for it (a caller's own, RunOptions::microkernels) takes the portable one.
    if (!mk.product_s8 || mk.int8_geometry != kAmxInt8Geometry) {
        mk.product_s8 = reference_product_s8;
        mk.int8_geometry = kAmxInt8Geometry;
    }
    return mk;
}

const char* operand_facts(const Fp64Gemm& call, const RunOptions& opt, Facts* f) {
    if (const char* why = int8_operand_facts(call.a, true, opt.threads, &f->a)) return why;
    return int8_operand_facts(call.b, false, opt.threads, &f->b);
}

// Step 2: the magnitude product and the certificate; fail_at (unless null) gets the entries to
// repair.
const char* certify(const Fp64Gemm& call, const Facts& f, const RunOptions& opt, const MicroKernels& mk,
                    Int8Decision* decision, std::vector<std::size_t>* fail_at) {
    // The counts the sample points at first (RunOptions::int8_counts_from, int8_counts_to),
    // every count where those do not settle every entry: the same decision either way
    // (Int8BlockCertificate::settled), at the cost of a second pass where the sample was
    // easier than the call.
    const int gamma_terms = call.gamma_terms ? call.gamma_terms : call.k;
    Int8BlockCertificate first, every;
    Int8BlockCertificate* cert = &first;
    const auto begin_every = [&] {
        cert = &every;
        return every.begin(f.a, f.b, gamma_terms, opt.fp64_tol, kInt8MinModuli, call.structural);
    };
    const auto no_count = [&] {
        decision->failing = long(call.m) * call.n;  // no count applies: every entry fails
        return reason::accuracy_uncertified;
    };
    if (!(opt.int8_counts_to > 0 && first.begin(f.a, f.b, gamma_terms, opt.fp64_tol, opt.int8_counts_from,
                                               call.structural, opt.int8_counts_to, true)) &&
        !begin_every())
        return no_count();
    const Int8Chunking ch = chunking_for(call, 1, true, opt);
    WorkspaceLease lease;
    if (const char* why = lease_workspace(int8_workspace_bytes(ch, opt.threads), opt.workspace_cap_bytes, &lease))
        return why;
    const Int8Buffers ws = int8_buffers(lease.data(), ch, opt.threads);
    // With K in one chunk each tile's sums are final when the tile is done: each group of tiles
    // (int8_walk.h) is converted into its participant's block and visited when the group is
    // done, and the C-sized FP64 sums are neither written nor read again. Every entry is visited
    // once either way, and the certificate's tallies do not depend on the order or the grouping.
    const bool one_chunk = ch.one_chunk;
    constexpr int kGroupSide = kInt8GroupSide;
    static_assert(kGroupSide <= kBlockM && kGroupSide <= kBlockN, "a group fits a participant's block");
    const auto lower_pass = [&](auto&& visit) {
        walk_int8(
            call.m, call.n, call.k, ch, ws, mk, opt.threads,
            [&](int o0, int outer, int k0, int kc) {
                pack_int8_magnitudes(true, call.a, f.a, o0, outer, k0, kc, ws.a[0], opt.threads);
            },
            [&](int o0, int outer, int k0, int kc) {
                pack_int8_magnitudes(false, call.b, f.b, o0, outer, k0, kc, ws.b[0], opt.threads);
            },
            [&](int, int ti, int tj, const std::int32_t* sum, bool first, bool, int participant) {
                // A chunk's sums (below 2^26) add exactly into FP64 (below 2^53 for any K < 2^31).
                if (one_chunk) {
                    double* dst = ws.blocks + std::size_t(participant) * ws.slot +
                                  std::size_t(ti % kInt8GroupTiles) * kInt8Tile * kGroupSide + (tj % kInt8GroupTiles) * kInt8Tile;
                    for (int r = 0; r < kInt8Tile; ++r)
                        for (int c = 0; c < kInt8Tile; ++c) dst[r * kGroupSide + c] = sum[r * kInt8Tile + c];
                    return;
                }
                double* dst = ws.sums + std::size_t(ti) * kInt8Tile * ws.ld + std::size_t(tj) * kInt8Tile;
                for (int r = 0; r < kInt8Tile; ++r)
                    for (int c = 0; c < kInt8Tile; ++c) {
                        const double v = sum[r * kInt8Tile + c];
                        dst[std::size_t(r) * ws.ld + c] = first ? v : dst[std::size_t(r) * ws.ld + c] + v;
                    }
            },
            [&](int gi0, int gj0, int grows, int gcols, bool, int participant) {
                if (one_chunk)
                    visit(gi0, gj0, grows, gcols, ws.blocks + std::size_t(participant) * ws.slot, std::size_t(kGroupSide));
            },
            [&](int si0, int sj0, int srows, int scols) {
                if (one_chunk) return;
                for_each_out_block(srows, scols, opt.threads, [&](int bi, int bj, int br, int bc, int) {
                    visit(si0 + bi, sj0 + bj, br, bc, ws.sums + std::size_t(bi) * ws.ld + bj, std::size_t(ws.ld));
                });
            });
    };
    const auto add_blocks = [&] {
        lower_pass([&](int i0, int j0, int rows, int cols, const double* low, std::size_t ld) {
            cert->add_block(i0, j0, rows, cols, low, ld);
        });
    };
    add_blocks();
    if (cert == &first && !first.settled()) {
        if (!begin_every()) return no_count();  // not reached: first's counts are among every's
        add_blocks();
    }
    const long limit = fp64_repair_limit(call.m, call.n);
    // A call that is to run (fail_at set) looks again at the entries failing at every count
    // against a lower bound of |A||B| summed in FP64 (int8_refine.h), before the count is
    // picked: then a call whose digits' bound alone fails a few too many entries still runs.
    // Only where that costs little: at most twice the repair limit of entries, and K
    // multiply-adds each within 1/64 of the call's M N K (2^20 for a small call), so that a call
    // with many entries that truly fail is forwarded or repaired as fast as before. (A decision
    // alone reports the first test's counts.)
    const long everywhere = fail_at ? cert->failing_everywhere() : 0;
    const double look_work = double(everywhere) * call.k;
    const double look_budget = std::max(double(call.m) * call.n * call.k / 64, 0x1p20);
    if (everywhere > 0 && everywhere <= 2 * limit && look_work <= look_budget) {
        std::vector<std::size_t> at;
        std::mutex hold;
        lower_pass([&](int i0, int j0, int rows, int cols, const double* low, std::size_t ld) {
            std::vector<std::size_t> mine;
            cert->failing_everywhere_in(i0, j0, rows, cols, low, ld, &mine);
            std::lock_guard<std::mutex> lock(hold);
            at.insert(at.end(), mine.begin(), mine.end());
        });
        std::sort(at.begin(), at.end());
        cert->retest(at, magnitude_lower_bounds(call.a, call.b, f.a, f.b, at, opt.threads));
    }
    cert->decide(decision);
    if (decision->failing > limit) return reason::accuracy_uncertified;
    if (decision->failing > 0 && fail_at) {
        std::mutex hold;
        lower_pass([&](int i0, int j0, int rows, int cols, const double* low, std::size_t ld) {
            std::vector<std::size_t> mine;
            cert->failing_in(i0, j0, rows, cols, low, ld, &mine);
            std::lock_guard<std::mutex> lock(hold);
            fail_at->insert(fail_at->end(), mine.begin(), mine.end());
        });
        std::sort(fail_at->begin(), fail_at->end());
    }
    return nullptr;
}

// Step 3: the residue products, the reconstruction and C.
// *pack_s: the seconds spent splitting and packing the residues.
const char* compute(const Fp64Gemm& call, const Facts& f, int count, const RunOptions& opt, const MicroKernels& mk,
                    double* pack_s) {
    const CrtBasis& basis = crt_basis(count);
    Int8Halves halves;
    if (!int8_halves(basis, call.k, &halves)) return reason::config_fp64_products;
    const Int8Chunking ch = chunking_for(call, count, false, opt);
    WorkspaceLease lease;
    if (const char* why = lease_workspace(int8_workspace_bytes(ch, opt.threads), opt.workspace_cap_bytes, &lease))
        return why;
    const Int8Buffers ws = int8_buffers(lease.data(), ch, opt.threads);
    const detail::Int8ResidueLoops& loops = *isa_kernels().int8_residues;
    // C's rows i0 .. i0 + rows - 1 and columns j0 .. j0 + cols - 1 from their residues (layer l,
    // row r, column c at res[l * layer + r * ld + c]), through out (a participant's block).
    const auto reconstruct = [&](int i0, int j0, int rows, int cols, const std::int8_t* res, std::size_t layer,
                                 std::size_t ld, double* out) {
        // P_ij 2^-(s_i + t_j): the scalings undone in the reconstruction's last step.
        int column_shift[kCrtRow], exponent[kCrtRow];
        for (int c = 0; c < cols; ++c) column_shift[c] = int8_shift(f.b, j0 + c, halves.b);
        for (int r = 0; r < rows; ++r) {
            const int s = int8_shift(f.a, i0 + r, halves.a);
            for (int c = 0; c < cols; ++c) exponent[c] = -s - column_shift[c];
            crt_to_double(basis, res + std::size_t(r) * ld, layer, cols, exponent, out + r * kBlockN);
        }
        call.write(i0, j0, rows, cols, out);
    };
    walk_int8(
        call.m, call.n, call.k, ch, ws, mk, opt.threads,
        [&](int o0, int outer, int k0, int kc) {
            const double t = now_s();
            pack_int8_residues(true, call.a, f.a, halves.a, basis, o0, outer, k0, kc, ws.a, opt.threads);
            *pack_s += now_s() - t;
        },
        [&](int o0, int outer, int k0, int kc) {
            const double t = now_s();
            pack_int8_residues(false, call.b, f.b, halves.b, basis, o0, outer, k0, kc, ws.b, opt.threads);
            *pack_s += now_s() - t;
        },
        [&](int l, int ti, int tj, const std::int32_t* sum, bool first, bool last, int participant) {
            // The chunks before the last fold into the super-block's residues; the last one reads
            // them (unless it is the first too) and leaves the task's in its participant's slot,
            // which group_done reconstructs while they are in cache.
            std::int8_t* kept =
                ws.res ? ws.res + l * ws.layer + std::size_t(ti) * kInt8Tile * ws.ld + std::size_t(tj) * kInt8Tile : nullptr;
            if (!last) {
                loops.fold(basis.m[l], sum, first, 1, kept, ws.ld, kept, ws.ld);
                return;
            }
            constexpr int kGroupSide = kInt8GroupSide;
            std::int8_t* dst = ws.group_residues(participant) + std::size_t(l) * kGroupSide * kGroupSide +
                               std::size_t(ti % kInt8GroupTiles) * kInt8Tile * kGroupSide + (tj % kInt8GroupTiles) * kInt8Tile;
            // The last chunk leaves y_l = P q_l mod m_l, what the reconstruction sums.
            loops.fold(basis.m[l], sum, first, basis.q[l], kept, ws.ld, dst, kGroupSide);
        },
        [&](int i0, int j0, int rows, int cols, bool last, int participant) {
            if (last)
                reconstruct(i0, j0, rows, cols, ws.group_residues(participant), std::size_t(kInt8GroupSide) * kInt8GroupSide,
                            kInt8GroupSide, ws.blocks + std::size_t(participant) * ws.slot);
        },
        [](int, int, int, int) {});
    return nullptr;
}

}  // namespace

Int8Chunking int8_chunking(int m, int n, int k, int layers, bool sums, int threads) {
    const Int8ChunkPlan plan = plan_int8_chunks(m, n, k, layers, sums, threads);
    Int8Chunking ch;
    ch.mc = plan.mc;
    ch.nc = plan.nc;
    ch.kc = plan.kc;
    ch.layers = layers;
    ch.sums = sums;
    ch.one_chunk = ch.kc >= k;
    return ch;
}

std::size_t int8_workspace_bytes(const Int8Chunking& ch, int threads) {
    return int8_chunk_bytes({ch.mc, ch.nc, ch.kc}, ch.layers, ch.sums, ch.one_chunk, threads);
}

// The same carving as int8_chunk_bytes counts.
Int8Buffers int8_buffers(void* p, const Int8Chunking& ch, int threads) {
    char* at = static_cast<char*>(p);
    const auto take = [&at](std::size_t bytes) {
        char* r = at;
        at += int8_aligned(bytes);
        return r;
    };
    Int8Buffers ws;
    for (int l = 0; l < ch.layers; ++l) ws.a[l] = reinterpret_cast<std::int8_t*>(take(int8_layer_bytes(ch.mc, ch.kc)));
    for (int l = 0; l < ch.layers; ++l) ws.b[l] = reinterpret_cast<std::int8_t*>(take(int8_layer_bytes(ch.nc, ch.kc)));
    ws.ld = round_up(ch.nc, kInt8Tile);
    ws.layer = int8_aligned(std::size_t(round_up(ch.mc, kInt8Tile)) * ws.ld);
    if (ch.one_chunk) {
        // Nothing is kept across chunks (int8_chunk_plan.h).
    } else if (ch.sums) {
        ws.sums = reinterpret_cast<double*>(take(ws.layer / sizeof(std::int8_t) * sizeof(double)));
    } else {
        ws.res = reinterpret_cast<std::int8_t*>(take(std::size_t(ch.layers) * ws.layer));
    }
    const std::size_t tile_bytes = int8_aligned(kInt8TileValues * sizeof(std::int32_t));
    ws.tiles = reinterpret_cast<std::int32_t*>(take(std::size_t(threads) * 2 * tile_bytes));
    const std::size_t slot_bytes = int8_aligned(int8_out_slot_bytes(ch.layers, !ch.sums));
    ws.slot = slot_bytes / sizeof(double);
    ws.blocks = reinterpret_cast<double*>(take(std::size_t(threads) * slot_bytes));
    return ws;
}

std::size_t int8_dgemm_workspace_bytes(int m, int n, int k, int threads, int moduli) {
    return std::max(int8_workspace_bytes(int8_chunking(m, n, k, 1, true, threads), threads),
                    int8_workspace_bytes(int8_chunking(m, n, k, moduli, false, threads), threads));
}

const char* run_int8_fp64_gemm(const Fp64Gemm& call, const RunOptions& opt) {
    return guarded([&]() -> const char* {
        if (const char* why = check_backend(opt)) return why;
        const bool automatic = opt.fp64_products == kFp64Auto;
        if (!automatic && (opt.fp64_products < kInt8MinModuli || opt.fp64_products > kInt8MaxModuli))
            return reason::config_fp64_products;
        const MicroKernels mk = int8_kernels(opt);
        const double t0 = now_s();
        Facts f;
        if (const char* why = operand_facts(call, opt, &f)) return why;
        const double t1 = now_s();
        int count = opt.fp64_products;
        Int8Decision decision;
        std::vector<std::size_t> fail_at;
        if (automatic) {
            if (const char* why = certify(call, f, opt, mk, &decision, &fail_at)) return why;
            count = decision.count;
        }
        const double t2 = now_s();
        std::function<void(int)> repairs;
        if (!fail_at.empty()) {
            if (!call.repairer) return reason::accuracy_uncertified;
            repairs = call.repairer(fail_at.data(), fail_at.size());
        }
        double pack_s = 0;
        if (const char* why = compute(call, f, count, opt, mk, &pack_s)) return why;
        if (repairs) repairs(opt.threads);
        if (opt.times) {  // the facts pass counts as the split's; the residue packing too
            opt.times->split_pack_s = (t1 - t0) + pack_s;
            opt.times->certificate_s = t2 - t1;
            opt.times->compute_s = now_s() - t2 - pack_s;
        }
        if (opt.fp64_report) {
            opt.fp64_report->products = count;
            opt.fp64_report->margin = automatic ? decision.margin : 0;
            if (call.complex_parts) {  // columns 2j and 2j + 1 are the parts of C's column j
                const std::size_t m = std::size_t(call.m);
                for (std::size_t& at : fail_at) at = at % m + at / m / 2 * m;
                fail_at.erase(std::unique(fail_at.begin(), fail_at.end()), fail_at.end());
            }
            opt.fp64_report->repaired = long(fail_at.size());
        }
        return nullptr;
    });
}

const char* int8_fp64_decide(const Fp64Gemm& call, const RunOptions& opt, Int8Decision* out) {
    return guarded([&]() -> const char* {
        if (const char* why = check_backend(opt)) return why;
        Facts f;
        if (const char* why = operand_facts(call, opt, &f)) return why;
        const char* why = certify(call, f, opt, int8_kernels(opt), out, nullptr);
        return why == reason::accuracy_uncertified ? nullptr : why;
    });
}

const char* decide_dgemm_int8(const GemmArgs<double>& g, const RunOptions& opt, const StructuralTest& structural,
                              Int8Decision* out) {
    Fp64Gemm call = fp64_gemm(g);
    call.structural = structural;
    return int8_fp64_decide(call, opt, out);
}

const char* decide_zgemm_int8(const GemmArgs<std::complex<double>>& g, const RunOptions& opt,
                              const StructuralTest& structural, Int8Decision* out) {
    if (complex_too_large(g.n, g.k)) return reason::memory_alloc_failed;
    Fp64Gemm call = fp64_gemm(g);
    call.structural = structural;
    return int8_fp64_decide(call, opt, out);
}

}  // namespace amxblas::kernels

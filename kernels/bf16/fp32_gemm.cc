// The FP32 method (blocked_gemm.h, run_fp32_gemm): the FP32 step of the macro-kernel, and one
// call that splits, packs, computes and writes (SGEMM, CGEMM).
#include "kernels/bf16/macro_kernel.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {
namespace {

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

}  // namespace

const char* run_fp32_gemm(const OperandView<float>& va, const OperandView<float>& vb, int m, int n, int k,
                          const RunOptions& opt, const BlockWriter<float>& write) {
    if (const char* why = check_backend(opt)) return why;
    const int threads = clamp_threads(opt.threads);
    const MicroKernels mk = kernels_for(opt);
    const Blocking bl(mk.geometry, m, n, k, threads);
    const Chunking ch = chunking_for(bl, m, n, k, kFp32Slices, sizeof(float), threads, opt);
    WorkspaceLease lease;
    if (const char* why = lease_workspace(chunk_workspace_bytes(bl, ch, kFp32Slices, sizeof(float), threads),
                                          opt.workspace_cap_bytes, &lease))
        return why;
    CallWorkspace ws = lay_out(static_cast<char*>(lease.data()), bl, ch, kFp32Slices, sizeof(float), threads);

    const SplitKernels& sk = split_kernels();
    double pack_s = 0;
    const auto timed = [&](auto&& f) {
        const double t0 = now_s();
        f();
        pack_s += now_s() - t0;
    };
    const auto pack_a = [&](int i0, int rows, int k0, int kc, const PackedOperand& out) {
        timed([&] { pack_a_fp32(sub_view(va, i0, rows, k0, kc), out, sk, threads); });
    };
    const auto pack_b = [&](int j0, int cols, int k0, int kc, const PackedOperand& out) {
        timed([&] { pack_b_fp32(sub_view(vb, k0, kc, j0, cols), out, sk, threads); });
    };
    ReconClock recon;
    recon.on = opt.times != nullptr;
    const double t0 = now_s();
    run_chunks(m, n, k, Fp32Step{ws.pa, ws.pb, reconstruct_kernels(), &recon}, ws, pack_a, pack_b, mk, bl, ch, threads,
               write);
    if (opt.times) {
        opt.times->split_pack_s = pack_s;
        opt.times->compute_s = now_s() - t0 - pack_s;
        opt.times->reconstruct_s = recon.seconds(threads, bl.mblocks * bl.nblocks);
    }
    return nullptr;
}

}  // namespace amxblas::kernels

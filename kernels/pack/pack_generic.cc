// The portable packer for any geometry (pack.h says when it runs). One task per panel (mr rows of op(A)
// or nr columns of op(B), all its K steps), so a panel's slice norms have one writer.
#include "kernels/pack/pack.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/reasons.h"
#include "kernels/pack/operand_element.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

// Where op(X)'s row (A) or column (B) o of a block and its K index kk go in g's packed order
// (microkernel.h).
int position(bool is_a, const TileGeometry& g, int o, int kk) {
    return is_a ? o * g.kstep + kk
                : (o / g.nr_vnni) * (g.kstep * g.nr_vnni) + (kk / 2) * (2 * g.nr_vnni) + (o % g.nr_vnni) * 2 + kk % 2;
}

// Block (panel p, K step s) of op(X) in out.geom's packed order, zeros past the edges.
template <typename T>
void gather(bool is_a, const OperandView<T>& x, const PackedOperand& out, int p, int s, T* tile) {
    const TileGeometry& g = out.geom;
    const int tile_outer = is_a ? g.mr : g.nr, o0 = p * tile_outer, l0 = s * g.kstep;
    const int outer = is_a ? x.rows : x.cols, kdim = is_a ? x.cols : x.rows;
    for (int o = 0; o < tile_outer; ++o)
        for (int kk = 0; kk < g.kstep; ++kk) {
            const bool inside = o0 + o < outer && l0 + kk < kdim;
            const T v = !inside ? T(0) : is_a ? element(x, o0 + o, l0 + kk) : element(x, l0 + kk, o0 + o);
            tile[position(is_a, g, o, kk)] = v;
        }
}

}  // namespace

const char* fold_fp64_partials(const PerParticipant<Fp64PackPartial>& part, double* resid_max, bool* subnormal) {
    int worst = 0;
    bool sub = false;
    double mx[kFp64Slices + 1] = {};
    for (const Fp64PackPartial& pp : part) {
        worst = std::max(worst, pp.worst);
        sub = sub || pp.subnormal;
        for (int t = 0; t <= kFp64Slices; ++t) mx[t] = std::max(mx[t], pp.mx[t]);
    }
    if (resid_max) std::copy(mx, mx + kFp64Slices + 1, resid_max);
    if (subnormal) *subnormal = sub;
    switch (static_cast<SliceStatus>(worst)) {
        case SliceStatus::ok: return nullptr;
        case SliceStatus::subnormal: return reason::domain_slice_subnormal;
        case SliceStatus::overflow: return reason::domain_slice_overflow;
    }
    return reason::domain_slice_subnormal;
}

void pack_fp32_generic(bool is_a, const OperandView<float>& x, const PackedOperand& out, const SplitKernels& sk,
                       int threads) {
    parallel_for(threads, out.panels, [&](int p, int) {
        std::vector<float> tile(out.block_elems);
        for (int s = 0; s < out.ksteps; ++s) {
            gather(is_a, x, out, p, s, tile.data());
            const std::size_t o = (std::size_t(p) * out.ksteps + s) * out.block_elems;
            sk.fp32(tile.data(), out.block_elems, out.slice[0] + o, out.slice[1] + o, out.slice[2] + o);
        }
    });
}

const char* pack_fp64_generic(bool is_a, const OperandView<double>& x, const int* exps, const Fp64Scales& sc,
                              const PackedOperand& out, const SplitKernels& sk, int threads, double* resid_max,
                              double* norms, bool* subnormal) {
    const TileGeometry& g = out.geom;
    const int outer = is_a ? x.rows : x.cols, tile_outer = is_a ? g.mr : g.nr;
    if (norms) std::fill(norms, norms + std::size_t(sc.slices) * outer, 0.0);
    PerParticipant<Fp64PackPartial> part(std::max(1, threads));
    parallel_for(threads, out.panels, [&](int p, int who) {
        Fp64PackPartial& mine = part[who];
        std::vector<double> tile(out.block_elems);
        const int first = p * tile_outer, count = std::min(tile_outer, outer - first);
        for (int s = 0; s < out.ksteps; ++s) {
            gather(is_a, x, out, p, s, tile.data());
            if (exps) {
                // The exact power-of-two scaling of pack.h, in pack_fp64.cc's two factors (split.h,
                // BlockScale): x * 2^-e, through 2^1023 first where 2^-e is not a double.
                for (int o = 0; o < count; ++o) {
                    const int e = exps[first + o];
                    const double f1 = e >= -1023 ? std::ldexp(1.0, -e) : std::ldexp(1.0, 1023);
                    const double f2 = e >= -1023 ? 1.0 : std::ldexp(1.0, -e - 1023);
                    for (int kk = 0; kk < g.kstep; ++kk) {
                        double& v = tile[position(is_a, g, o, kk)];
                        v = v * f1 * f2;
                        mine.subnormal = mine.subnormal || (v != 0 && std::fabs(v) < DBL_MIN);
                    }
                }
            }
            const std::size_t at = (std::size_t(p) * out.ksteps + s) * out.block_elems;
            bf16_t* dst[kFp64Slices] = {};
            for (int t = 0; t < sc.slices; ++t) dst[t] = out.slice[t] + at;
            const SliceStatus st = sk.fp64(tile.data(), out.block_elems, sc, dst, resid_max ? mine.mx : nullptr);
            mine.worst = std::max(mine.worst, static_cast<int>(st));
            if (!norms) continue;
            // Sums of |normalised slice entry| (multiples of 2^-8 of at most 1): exact in any
            // order, so the same as pack_fp64.cc's.
            for (int t = 0; t < sc.slices; ++t)
                for (int o = 0; o < count; ++o) {
                    double sum = 0;
                    for (int kk = 0; kk < g.kstep; ++kk)
                        sum += double(bits_float(std::uint32_t(dst[t][position(is_a, g, o, kk)] & 0x7FFF) << 16));
                    norms[std::size_t(t) * outer + first + o] += sum;
                }
        }
    });
    return fold_fp64_partials(part, resid_max, subnormal);
}

}  // namespace amxblas::kernels

// Portable split and gathers (the definition the other instruction sets must match bit for bit),
// and the split's instruction-set independent helpers (split.h).
#include "kernels/isa/split.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {
namespace {

void fp32_portable(const float* x, std::size_t n, bf16_t* s0, bf16_t* s1, bf16_t* s2) {
    for (std::size_t i = 0; i < n; ++i) {
        float r = x[i];
        const bf16_t h0 = bf16_rne(r);
        r = r - bf16_to_float(h0);
        const bf16_t h1 = bf16_rne(r);
        r = r - bf16_to_float(h1);
        s0[i] = h0;
        s1[i] = h1;
        s2[i] = bf16_rne(r);
    }
}

// Z = fl64(fl64(x + sigma) - sigma) with sigma = 0.75 * 2^(v+45) = 1.5 * 2^(v+44) and |x| <= 2^v:
// x + sigma stays inside [2^(v+44), 2^(v+45)), where the FP64 spacing is 2^(v-8) for either sign
// of x, so Z is x rounded to nearest (ties to even) on a 2^(v-8) grid: |Z| <= 2^v, Z(-x) = -Z(x),
// and |x - Z| <= 2^(v-9). Such a Z has at most 8 significant bits, so when it is a normal BF16
// magnitude the conversion below is exact and the residual update x - Z is exact too (paper,
// after Eq. 14), and each slice takes 9 bits of the matrix scale (8 + the residual's sign).
inline double ozaki_chunk(double x, double sigma) {
    const double t = x + sigma;
    return t - sigma;
}

AbsMax fp64_absmax_portable(const double* x, std::size_t n, const Fp64Scales& sc, int r) {
    AbsMax out;
    for (std::size_t i = 0; i < n; ++i) {
        double v = x[i];
        if (!std::isfinite(v)) out.nonfinite = true;
        for (int t = 0; t < r; ++t) v -= ozaki_chunk(v, sc.sigma[t]);
        const double a = std::fabs(v);
        if (a > out.value) out.value = a;
    }
    return out;
}

#include "kernels/isa/fp64_split_runs.inc"

inline std::uint64_t abs_bits(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u & kF64AbsMask;
}

std::uint64_t absbits_max_portable(const double* x, std::size_t n) {
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < n; ++i) m = std::max(m, abs_bits(x[i]));
    return m;
}

void absbits_max_lanes_portable(const double* x, std::size_t ld, int len, int n, std::uint64_t* m) {
    for (int l = 0; l < len; ++l)
        for (int o = 0; o < n; ++o) m[o] = std::max(m[o], abs_bits(x[o + std::size_t(l) * ld]));
}

inline bool below_normal(double y) { return y != 0 && std::fabs(y) < DBL_MIN; }

bool scale_fp64_portable(bool is_a, const BlockScale& bs, double* tile) {
    bool sub = false;
    if (is_a) {
        for (int r = 0; r < kTile; ++r)
            for (int kk = 0; kk < kTile; ++kk) {
                const double y = tile[r * kTile + kk] * bs.f1[r] * bs.f2[r];
                sub = sub || below_normal(y);
                tile[r * kTile + kk] = y;
            }
    } else {
        for (int h = 0; h < 2; ++h)
            for (int p = 0; p < kTile / 2; ++p)
                for (int c = 0; c < 16; ++c)
                    for (int e = 0; e < 2; ++e) {
                        double& x = tile[h * kHalfElems + p * kTile + c * 2 + e];
                        x = x * bs.f1[16 * h + c] * bs.f2[16 * h + c];
                        sub = sub || below_normal(x);
                    }
    }
    return sub;
}

void gather_split_fp32_portable(BlockSource kind, const float* src, std::size_t ld, bf16_t* s0, bf16_t* s1, bf16_t* s2) {
    alignas(64) float tile[kStepElems];
    gather_portable(kind, src, ld, tile);
    fp32_portable(tile, kStepElems, s0, s1, s2);
}

bool gather_scale_fp64_portable(BlockSource kind, const double* src, std::size_t ld, bool is_a, const BlockScale& bs,
                                double* tile) {
    gather_portable(kind, src, ld, tile);
    return scale_fp64_portable(is_a, bs, tile);
}


}  // namespace

double ozaki_sigma(double maxabs) {
    int e;
    const double f = std::frexp(maxabs, &e);  // maxabs = f * 2^e, f in [0.5, 1)
    const int v = (f == 0.5) ? e - 1 : e;     // ceil(log2(maxabs)), exact for powers of two
    return std::ldexp(0.75, v + kOzakiRho);  // Ozaki's 0.75 factor: one binade for both signs
}

void set_slice_norms(Fp64Scales* sc) {
    for (int r = 0; r < kFp64Slices; ++r) sc->norm[r] = r < sc->active ? std::ldexp(1.0, -ozaki_v(sc->sigma[r])) : 0.0;
}

const SplitKernels& split_kernels_portable() {
    static const SplitKernels k{fp32_portable,
                                fp64_absmax_portable,
                                fp64_split_in_runs,
                                absbits_max_portable,
                                absbits_max_lanes_portable,
                                scale_fp64_portable,
                                gather_portable<float>,
                                gather_portable<double>,
                                gather_split_fp32_portable,
                                gather_scale_fp64_portable};
    return k;
}

}  // namespace amxblas::kernels

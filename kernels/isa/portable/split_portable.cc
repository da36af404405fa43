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

// BF16's normal range: nonzero slices outside it cannot be stored unscaled (paper Eq. 2).
constexpr double kBf16MinNormal = 0x1p-126;
constexpr double kBf16MaxFinite = 0x1.FEp127;  // (2 - 2^-7) * 2^127

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

// A value's slices are a chain of dependent additions, so a loop over the values that walks
// each chain in turn is latency bound. This one takes a run of values slice by slice, each step
// a loop over the run that the compiler vectorizes (sources.cmake: -fno-trapping-math, so the
// selects stay selects): every value sees the same operations in the same order as in a loop
// value by value, and the status and the maxima are order-free, so no bit changes.
constexpr std::size_t kRun = 64;

template <bool Track>
SliceStatus fp64_split_portable(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                                double* resid_max) {
    alignas(64) double v[kRun];
    // Per lane, folded at the end (a reduction into one variable would keep the loop scalar):
    // the residuals' maxima, and the largest and the smallest nonzero |slice| before rounding.
    alignas(64) double lane_max[kFp64Slices + 1][kRun] = {};
    alignas(64) double largest[kRun] = {}, smallest[kRun];
    std::fill(smallest, smallest + kRun, kBf16MinNormal);
    const auto raise = [](double a, double* m) { *m = a > *m ? a : *m; };
    for (std::size_t i0 = 0; i0 < n; i0 += kRun) {
        const std::size_t len = std::min(kRun, n - i0);
        bool zeros = true;
        for (std::size_t i = 0; i < len; ++i) {
            v[i] = x[i0 + i];
            zeros = zeros && v[i] == 0;
        }
        if (zeros) {  // +0 in every slice and no maximum raised: what the loop below gives zeros
            for (int t = 0; t < sc.slices; ++t) std::fill(s[t] + i0, s[t] + i0 + len, bf16_t(0));
            continue;
        }
        for (int t = 0; t < sc.slices; ++t) {
            bf16_t* out = s[t] + i0;
            if (Track)
                for (std::size_t i = 0; i < len; ++i) raise(std::fabs(v[i]), &lane_max[t][i]);
            if (t >= sc.active) {
                std::fill(out, out + len, bf16_t(0));
                continue;
            }
            const double sigma = sc.sigma[t], norm = sc.norm[t];
            for (std::size_t i = 0; i < len; ++i) {
                const double c = ozaki_chunk(v[i], sigma);
                const double z = c * norm;  // exact: a power of two, no underflow
                const double az = std::fabs(z);
                raise(az, &largest[i]);
                smallest[i] = az != 0 && az < smallest[i] ? az : smallest[i];
                out[i] = bf16_rne(static_cast<float>(z));
                v[i] -= c;
            }
        }
        if (Track)
            for (std::size_t i = 0; i < len; ++i) raise(std::fabs(v[i]), &lane_max[sc.slices][i]);
    }
    bool overflow = false, subnormal = false;
    for (std::size_t i = 0; i < kRun; ++i) {
        overflow = overflow || largest[i] > kBf16MaxFinite;
        subnormal = subnormal || smallest[i] < kBf16MinNormal;
        if (Track)
            for (int t = 0; t <= sc.slices; ++t) resid_max[t] = std::max(resid_max[t], lane_max[t][i]);
    }
    return overflow ? SliceStatus::overflow : subnormal ? SliceStatus::subnormal : SliceStatus::ok;
}

SliceStatus fp64_portable(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                          double* resid_max) {
    return resid_max ? fp64_split_portable<true>(x, n, sc, s, resid_max) : fp64_split_portable<false>(x, n, sc, s, nullptr);
}

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
                                fp64_portable,
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

// AVX-512 split: the same function as split.cc, 16 floats / 8 doubles at a time, with a scalar
// tail through the portable table. Built with -mavx512f -mavx512bw -mavx512dq -mavx512vl only;
// called only when cpu_has_avx512_split() says so.
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/isa/microkernel.h"
#include "kernels/isa/split.h"
#include "kernels/isa/avx512/split_avx512.h"

namespace amxblas::kernels {
namespace {

constexpr double kBf16MinNormal = 0x1p-126;
constexpr double kBf16MaxFinite = 0x1.FEp127;

using avx512::rne16;

void fp32_avx512(const float* x, std::size_t n, bf16_t* s0, bf16_t* s1, bf16_t* s2) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h0, h1, h2;
        avx512::split_fp32_16(_mm512_loadu_ps(x + i), &h0, &h1, &h2);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s0 + i), h0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s1 + i), h1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s2 + i), h2);
    }
    if (i < n) split_kernels_portable().fp32(x + i, n - i, s0 + i, s1 + i, s2 + i);
}

inline __m512d ozaki_chunk8(__m512d x, __m512d sigma) {
    return _mm512_sub_pd(_mm512_add_pd(x, sigma), sigma);
}

AbsMax fp64_absmax_avx512(const double* x, std::size_t n, const Fp64Scales& sc, int r) {
    __m512d mx = _mm512_setzero_pd();
    __mmask8 nonfinite = 0;
    const __m512d inf = _mm512_set1_pd(INFINITY);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d v = _mm512_loadu_pd(x + i);
        // |x| < Inf is false for Inf and NaN (ordered, non-signalling compare).
        nonfinite |= __mmask8(~_mm512_cmp_pd_mask(_mm512_abs_pd(v), inf, _CMP_LT_OQ));
        for (int t = 0; t < r; ++t) v = _mm512_sub_pd(v, ozaki_chunk8(v, _mm512_set1_pd(sc.sigma[t])));
        mx = _mm512_max_pd(mx, _mm512_abs_pd(v));
    }
    AbsMax out;
    out.value = _mm512_reduce_max_pd(mx);
    out.nonfinite = nonfinite != 0;
    if (i < n) {
        const AbsMax tail = split_kernels_portable().fp64_absmax(x + i, n - i, sc, r);
        if (tail.value > out.value) out.value = tail.value;
        out.nonfinite = out.nonfinite || tail.nonfinite;
    }
    return out;
}

// The two FP64 splits' common ends of a run: the lanes' residual maxima folded into
// resid_max[0..S], and the values past the last whole 16 (i .. n - 1) split by the portable
// kernel (the same arithmetic), whose status is returned (ok when there are none).
template <int S>
void fold_resid_max(const __m512d (&mx)[S + 1], double* resid_max) {
    for (int t = 0; t <= S; ++t) {
        const double m = _mm512_reduce_max_pd(mx[t]);
        if (m > resid_max[t]) resid_max[t] = m;
    }
}

template <int S>
SliceStatus split_tail(const double* x, std::size_t i, std::size_t n, const Fp64Scales& sc,
                       bf16_t* const s[kFp64Slices], double* resid_max) {
    if (i >= n) return SliceStatus::ok;
    bf16_t* tail[kFp64Slices] = {};
    for (int t = 0; t < S; ++t) tail[t] = s[t] + i;
    return split_kernels_portable().fp64(x + i, n - i, sc, tail, resid_max);
}

// S = sc.slices as a template argument: the slice loop unrolls and the residual maxima stay in
// registers. The range checks accumulate in registers too (no mask moves per step): the
// largest |z| for the overflow check, and the smallest |z| pattern minus 1 (a zero wraps to
// the largest) for "nonzero and below 2^-126"; finite magnitudes order as their patterns do.
// Narrowed: each slice is the upper half of its FP32 pattern (cvtpd_ps of z). A normalised
// slice entry has at most 8 significant bits (split.h), so that pattern has a zero lower half,
// and then rne16 is the upper half: no carry reaches bit 16, and a NaN from cvtpd_ps is
// already quiet. *inexact says whether some lower half was not zero (a scale guess the packer
// then refutes, or a safety-net case), and the caller runs the rne16 version (same stores,
// same maxima) over the run again.
template <bool Track, int S, bool Narrowed>
SliceStatus fp64_split_avx512(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                              double* resid_max, bool* inexact) {
    const __m512d zero = _mm512_setzero_pd();
    const __m512i one = _mm512_set1_epi64(1);
    const int active = sc.active;
    __m512d sigma[S], norm[S];
    for (int t = 0; t < S; ++t) {
        sigma[t] = _mm512_set1_pd(sc.sigma[t]);
        norm[t] = _mm512_set1_pd(sc.norm[t]);
    }
    __m512d top = zero;                           // max |z|
    __m512i low = _mm512_set1_epi64(-1);          // min (pattern of |z|) - 1
    __m512i lower_halves = _mm512_setzero_si512();  // OR of the narrowed patterns
    __m512d mx[S + 1];
    for (auto& m : mx) m = zero;
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512d v0 = _mm512_loadu_pd(x + i), v1 = _mm512_loadu_pd(x + i + 8);
        for (int t = 0; t < S; ++t) {
            if (Track) mx[t] = _mm512_max_pd(mx[t], _mm512_max_pd(_mm512_abs_pd(v0), _mm512_abs_pd(v1)));
            if (t >= active) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(s[t] + i), _mm256_setzero_si256());
                continue;
            }
            const __m512d c0 = ozaki_chunk8(v0, sigma[t]), c1 = ozaki_chunk8(v1, sigma[t]);
            const __m512d z0 = _mm512_mul_pd(c0, norm[t]), z1 = _mm512_mul_pd(c1, norm[t]);
            const __m512d a0 = _mm512_abs_pd(z0), a1 = _mm512_abs_pd(z1);
            top = _mm512_max_pd(top, _mm512_max_pd(a0, a1));
            low = _mm512_min_epu64(low, _mm512_min_epu64(_mm512_sub_epi64(_mm512_castpd_si512(a0), one),
                                                         _mm512_sub_epi64(_mm512_castpd_si512(a1), one)));
            // Round-to-nearest double -> float (default MXCSR, as the portable cast), then RNE.
            const __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(z0)), _mm512_cvtpd_ps(z1), 1);
            __m256i h;
            if (Narrowed) {
                lower_halves = _mm512_or_si512(lower_halves, _mm512_castps_si512(f));
                h = avx512::upper_halves(_mm512_castps_si512(f));
            } else {
                h = rne16(f);
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(s[t] + i), h);
            v0 = _mm512_sub_pd(v0, c0);
            v1 = _mm512_sub_pd(v1, c1);
        }
        if (Track) mx[S] = _mm512_max_pd(mx[S], _mm512_max_pd(_mm512_abs_pd(v0), _mm512_abs_pd(v1)));
    }
    if (Narrowed) {
        *inexact = _mm512_test_epi32_mask(lower_halves, _mm512_set1_epi32(0xFFFF)) != 0;
        if (*inexact) return SliceStatus::ok;
    }
    const bool overflow = _mm512_cmp_pd_mask(top, _mm512_set1_pd(kBf16MaxFinite), _CMP_GT_OQ) != 0;
    std::uint64_t tiny_bits;
    std::memcpy(&tiny_bits, &kBf16MinNormal, sizeof tiny_bits);
    const bool subnormal = _mm512_cmplt_epu64_mask(low, _mm512_set1_epi64(std::int64_t(tiny_bits - 1))) != 0;
    int worst = overflow ? 2 : (subnormal ? 1 : 0);
    if (Track) fold_resid_max<S>(mx, resid_max);
    const int w = static_cast<int>(split_tail<S>(x, i, n, sc, s, resid_max));
    return static_cast<SliceStatus>(w > worst ? w : worst);
}

// The split the packer runs (with residual maxima), checked once at the end instead of per
// value. Each active slice t (v = v(t), sigma = sigma[t], norm = 2^-v) computes
//   u = x + sigma,  z = u * norm - sigma * norm (one FMA),  x' = x - z * 2^v (one FMA),
// and stores the upper half of fl32(z). Where every input of slice t has |x| <= 2^v (the
// residual maximum mx[t], which the pass measures anyway, says so for the whole run), this is
// the general split bit for bit:
// - u is x + sigma rounded as there, and c = u - sigma is exact (split.cc, ozaki_chunk): a
//   multiple of 2^(v-8) with |c| <= 2^v. z = c * 2^-v exactly, both as there (c * norm, exact:
//   a power of two, v >= kFp64MinSliceExp) and here: sigma * norm = 0.75 * 2^45 is exact, u *
//   norm - sigma * norm is the exact real c * 2^-v, a double, so the FMA's one rounding leaves
//   it. z * 2^v is the real c, and x - c is a double (the exact residual update, split.cc), so
//   the second FMA gives x - c too.
// - z = k * 2^-8 with an integer |k| <= 256: a nonzero |z| lies in [2^-8, 1] (neither
//   subnormal nor past the BF16 range: status ok) and has at most 8 significant bits, so
//   fl32(z) = z and the lower half of its pattern is zero: rne16 is the upper half (the
//   Narrowed case above).
// So when mx[t] <= 2^v(t) for every t < sc.active, stores, maxima and status (ok) are the
// general ones, by induction over t (slice t's inputs are the general ones when the slices
// before it met the bound). Inf and NaN: mx[0] is kept as the largest |x| pattern (the same
// value as max_pd on finite inputs), above every finite bound for an Inf or NaN; a run with
// one fails the check, and later residuals are finite when the inputs are (so the maxima
// t >= 1, taken by VRANGEPD, never see a NaN in a run that passes). Returns false when
// the check fails, and the caller splits the run again the general way (overwriting every
// store; resid_max may have taken maxima the general split takes too, and max is idempotent).
// max(m, |v|) lane by lane for m >= 0 and v not NaN, in one VRANGEPD (imm 0x0B: the operand of
// larger magnitude, sign cleared): the value max_pd(m, abs_pd(v)) gives.
inline __m512d absmax_into(__m512d m, __m512d v) { return _mm512_range_pd(m, v, 0x0B); }

template <int S>
bool fp64_split_checked(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                        double* resid_max) {
    const int active = sc.active;
    __m512d sigma[S], norm[S], sn[S], bound[S];
    for (int t = 0; t < S; ++t) {
        const double b = t < active ? 1.0 / sc.norm[t] : 0.0;  // 2^v(t): norm is a power of two
        sigma[t] = _mm512_set1_pd(sc.sigma[t]);
        norm[t] = _mm512_set1_pd(sc.norm[t]);
        sn[t] = _mm512_set1_pd(sc.sigma[t] * sc.norm[t]);
        bound[t] = _mm512_set1_pd(b);
    }
    const __m512i abs_mask = _mm512_set1_epi64(std::int64_t(kF64AbsMask));
    __m512i mx0 = _mm512_setzero_si512();  // patterns of |x^(0)|
    __m512d mx[S + 1];
    for (auto& m : mx) m = _mm512_setzero_pd();
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512d v0 = _mm512_loadu_pd(x + i), v1 = _mm512_loadu_pd(x + i + 8);
        mx0 = _mm512_max_epu64(mx0, _mm512_max_epu64(_mm512_and_si512(_mm512_castpd_si512(v0), abs_mask),
                                                    _mm512_and_si512(_mm512_castpd_si512(v1), abs_mask)));
        for (int t = 0; t < S; ++t) {
            if (t > 0) mx[t] = absmax_into(absmax_into(mx[t], v0), v1);
            if (t >= active) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(s[t] + i), _mm256_setzero_si256());
                continue;
            }
            const __m512d u0 = _mm512_add_pd(v0, sigma[t]), u1 = _mm512_add_pd(v1, sigma[t]);
            const __m512d z0 = _mm512_fmsub_pd(u0, norm[t], sn[t]), z1 = _mm512_fmsub_pd(u1, norm[t], sn[t]);
            const __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(z0)), _mm512_cvtpd_ps(z1), 1);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(s[t] + i), avx512::upper_halves(_mm512_castps_si512(f)));
            v0 = _mm512_fnmadd_pd(z0, bound[t], v0);
            v1 = _mm512_fnmadd_pd(z1, bound[t], v1);
        }
        mx[S] = absmax_into(absmax_into(mx[S], v0), v1);
    }
    if (active > 0 && _mm512_cmpgt_epu64_mask(mx0, _mm512_castpd_si512(bound[0])) != 0) return false;
    for (int t = 1; t < active && t < S; ++t)
        if (_mm512_cmp_pd_mask(mx[t], bound[t], _CMP_GT_OQ) != 0) return false;
    mx[0] = _mm512_castsi512_pd(mx0);
    fold_resid_max<S>(mx, resid_max);
    // A tail outside the bound would report a status (ok is all the check proves).
    return split_tail<S>(x, i, n, sc, s, resid_max) == SliceStatus::ok;
}

// Whether fp64_split_checked can run with these scales: every active 2^v(t) and 2^-v(t) a
// normal double (always so for the packer's scales, v(t) in [kFp64MinSliceExp, 0]).
inline bool checked_scales(const Fp64Scales& sc, int slices) {
    for (int t = 0; t < sc.active && t < slices; ++t)
        if (!(sc.norm[t] >= 0x1p-1000 && sc.norm[t] <= 0x1p1000)) return false;
    return true;
}

template <bool Track, int S>
SliceStatus fp64_split_avx512(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                              double* resid_max) {
    if (Track && checked_scales(sc, S) && fp64_split_checked<S>(x, n, sc, s, resid_max)) return SliceStatus::ok;
    bool inexact = false;
    const SliceStatus st = fp64_split_avx512<Track, S, true>(x, n, sc, s, resid_max, &inexact);
    return inexact ? fp64_split_avx512<Track, S, false>(x, n, sc, s, resid_max, &inexact) : st;
}

template <bool Track>
SliceStatus fp64_split_slices(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                              double* resid_max) {
    static_assert(kFp64Slices == 8, "one case per slice count");
    switch (sc.slices) {
        case 1: return fp64_split_avx512<Track, 1>(x, n, sc, s, resid_max);
        case 2: return fp64_split_avx512<Track, 2>(x, n, sc, s, resid_max);
        case 3: return fp64_split_avx512<Track, 3>(x, n, sc, s, resid_max);
        case 4: return fp64_split_avx512<Track, 4>(x, n, sc, s, resid_max);
        case 5: return fp64_split_avx512<Track, 5>(x, n, sc, s, resid_max);
        case 6: return fp64_split_avx512<Track, 6>(x, n, sc, s, resid_max);
        case 7: return fp64_split_avx512<Track, 7>(x, n, sc, s, resid_max);
        case 8: return fp64_split_avx512<Track, 8>(x, n, sc, s, resid_max);
        default: return split_kernels_portable().fp64(x, n, sc, s, resid_max);  // no slice written
    }
}

SliceStatus fp64_avx512(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                        double* resid_max) {
    return resid_max ? fp64_split_slices<true>(x, n, sc, s, resid_max) : fp64_split_slices<false>(x, n, sc, s, nullptr);
}

std::uint64_t absbits_max_avx512(const double* x, std::size_t n) {
    const __m512i abs = _mm512_set1_epi64(std::int64_t(kF64AbsMask));
    __m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm512_max_epu64(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), abs));
        m1 = _mm512_max_epu64(m1, _mm512_and_si512(_mm512_loadu_si512(x + i + 8), abs));
        m2 = _mm512_max_epu64(m2, _mm512_and_si512(_mm512_loadu_si512(x + i + 16), abs));
        m3 = _mm512_max_epu64(m3, _mm512_and_si512(_mm512_loadu_si512(x + i + 24), abs));
    }
    for (; i + 8 <= n; i += 8) m0 = _mm512_max_epu64(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), abs));
    if (i < n) {
        const __mmask8 k = __mmask8((1u << (n - i)) - 1);
        m1 = _mm512_max_epu64(m1, _mm512_and_si512(_mm512_maskz_loadu_epi64(k, x + i), abs));
    }
    return _mm512_reduce_max_epu64(_mm512_max_epu64(_mm512_max_epu64(m0, m1), _mm512_max_epu64(m2, m3)));
}

void absbits_max_lanes_avx512(const double* x, std::size_t ld, int len, int n, std::uint64_t* m) {
    const __m512i abs = _mm512_set1_epi64(std::int64_t(kF64AbsMask));
    const int full = n / 8 * 8;
    const __mmask8 k = __mmask8((1u << (n - full)) - 1);
    for (int l = 0; l < len; ++l) {
        const double* run = x + std::size_t(l) * ld;
        int o = 0;
        for (; o < full; o += 8) {
            const __m512i v = _mm512_and_si512(_mm512_loadu_si512(run + o), abs);
            _mm512_storeu_si512(m + o, _mm512_max_epu64(_mm512_loadu_si512(m + o), v));
        }
        if (k) {
            const __m512i v = _mm512_and_si512(_mm512_maskz_loadu_epi64(k, run + o), abs);
            _mm512_mask_storeu_epi64(m + o, k, _mm512_max_epu64(_mm512_maskz_loadu_epi64(k, m + o), v));
        }
    }
}

// Lanes of y that are nonzero and below 2^-1022 in magnitude.
inline __mmask8 below_normal8(__m512d y) {
    const __m512d a = _mm512_abs_pd(y);
    return _mm512_cmp_pd_mask(a, _mm512_set1_pd(DBL_MIN), _CMP_LT_OQ) &
           _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_NEQ_OQ);
}

// x * f1 (* f2): the portable scale_fp64's products, in its order.
template <bool TwoStep>
inline __m512d scale8(__m512d x, __m512d f1, __m512d f2) {
    const __m512d y = _mm512_mul_pd(x, f1);
    return TwoStep ? _mm512_mul_pd(y, f2) : y;
}

template <bool TwoStep>
bool scale_fp64_avx512_t(bool is_a, const BlockScale& bs, double* tile) {
    __mmask8 sub = 0;
    if (is_a) {
        for (int r = 0; r < kTile; ++r) {
            const __m512d f1 = _mm512_set1_pd(bs.f1[r]), f2 = _mm512_set1_pd(bs.f2[r]);
            for (int kk = 0; kk < kTile; kk += 8) {
                const __m512d y = scale8<TwoStep>(_mm512_load_pd(tile + r * kTile + kk), f1, f2);
                sub |= below_normal8(y);
                _mm512_store_pd(tile + r * kTile + kk, y);
            }
        }
    } else {
        // Row p of half h holds columns 16h + c at positions 2c and 2c + 1: the factors of the
        // four registers of a row, each column's twice.
        const __m512i lo = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), hi = _mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7);
        for (int h = 0; h < 2; ++h) {
            __m512d g1[4], g2[4];
            for (int q = 0; q < 2; ++q) {
                const __m512d a1 = _mm512_loadu_pd(bs.f1 + 16 * h + 8 * q), a2 = _mm512_loadu_pd(bs.f2 + 16 * h + 8 * q);
                g1[2 * q] = _mm512_permutexvar_pd(lo, a1);
                g1[2 * q + 1] = _mm512_permutexvar_pd(hi, a1);
                g2[2 * q] = _mm512_permutexvar_pd(lo, a2);
                g2[2 * q + 1] = _mm512_permutexvar_pd(hi, a2);
            }
            for (int p = 0; p < kTile / 2; ++p)
                for (int q = 0; q < 4; ++q) {
                    double* at = tile + h * kHalfElems + p * kTile + 8 * q;
                    const __m512d y = scale8<TwoStep>(_mm512_load_pd(at), g1[q], g2[q]);
                    sub |= below_normal8(y);
                    _mm512_store_pd(at, y);
                }
        }
    }
    return sub != 0;
}

bool scale_fp64_avx512(bool is_a, const BlockScale& bs, double* tile) {
    return bs.two_step ? scale_fp64_avx512_t<true>(is_a, bs, tile) : scale_fp64_avx512_t<false>(is_a, bs, tile);
}

}  // namespace

const SplitKernels& split_kernels_avx512() {
    static const SplitKernels k{fp32_avx512,
                                fp64_absmax_avx512,
                                fp64_avx512,
                                absbits_max_avx512,
                                absbits_max_lanes_avx512,
                                scale_fp64_avx512,
                                gather_avx512<float>,
                                gather_avx512<double>,
                                gather_split_fp32_avx512,
                                gather_scale_fp64_avx512};
    return k;
}

}  // namespace amxblas::kernels

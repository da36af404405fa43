// The INT8 engine's block loops, AVX-512 build (kernels/isa/int8_residue_loops.h): eight doubles
// a vector (sources.cmake), and the gather of whole blocks in registers. Used only where
// isa_runs(Isa::avx512).
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/isa/avx512/int8_residues_vnni.h"
#include "kernels/isa/avx512/transpose_avx512.h"
#include "kernels/isa/int8_residue_loops.h"
#include "kernels/runtime/cpu_features.h"

namespace amxblas::kernels::detail {

#include "kernels/isa/int8_residue_loops.inc"
#include "kernels/isa/int8_certificate_row.inc"
#include "kernels/isa/int8_facts_loops.inc"

namespace {

static_assert(kInt8BlockOuter == 32 && kInt8BlockDepth == 64 && kInt8QuadColumns == 16, "the loops below");

// A: rows o are contiguous in memory, the packed block holds each row's 64 K values in a run
// (v[o * 64 + l]): 8 x 8 transposes. B: each column's K values are contiguous, the packed block
// holds K quads of 16 columns (v[(o / 16) * 1024 + (l / 4) * 64 + (o % 16) * 4 + l % 4]): each
// load of 8 K values is two quads.
inline int packed_at(bool is_a, int o, int l) {
    return is_a ? o * kInt8BlockDepth + l
                : (o / kInt8QuadColumns) * (kInt8BlockDepth * kInt8QuadColumns) + (l / 4) * (4 * kInt8QuadColumns) +
                      (o % kInt8QuadColumns) * 4 + l % 4;
}

// A whole block of an untransposed operand, scaled, eight K values at a time: put(o, l0, x), x
// the values of row (IsA) or column o at K indices l0 .. l0 + 7 times scale[o].
template <bool IsA, typename Put>
void scaled_runs(const double* base, std::size_t ld, const double* scale, Put&& put) {
    if (IsA) {
        for (int o0 = 0; o0 < kInt8BlockOuter; o0 += 8) {
            const __m512d s = _mm512_loadu_pd(scale + o0);
            for (int l0 = 0; l0 < kInt8BlockDepth; l0 += 8) {
                __m512d r[8];
                for (int i = 0; i < 8; ++i) r[i] = _mm512_mul_pd(_mm512_loadu_pd(base + o0 + (l0 + i) * ld), s);
                avx512::transpose8x8_64(r);
                for (int j = 0; j < 8; ++j) put(o0 + j, l0, r[j]);
            }
        }
        return;
    }
    for (int o = 0; o < kInt8BlockOuter; ++o) {
        const __m512d s = _mm512_set1_pd(scale[o]);
        for (int l0 = 0; l0 < kInt8BlockDepth; l0 += 8) put(o, l0, _mm512_mul_pd(_mm512_loadu_pd(base + o * ld + l0), s));
    }
}

void int8_gather_full(bool is_a, const double* base, std::size_t ld, const double* scale, double* v) {
    if (is_a) {
        scaled_runs<true>(base, ld, scale, [v](int o, int l0, __m512d x) { _mm512_storeu_pd(v + packed_at(true, o, l0), x); });
        return;
    }
    scaled_runs<false>(base, ld, scale, [v](int o, int l0, __m512d x) {
        _mm256_storeu_pd(v + packed_at(false, o, l0), _mm512_castpd512_pd256(x));
        _mm256_storeu_pd(v + packed_at(false, o, l0 + 4), _mm512_extractf64x4_pd(x, 1));
    });
}

// min(127, floor(|x|)) of eight values, as eight bytes in a 64-bit integer (digits' value:
// the floor by VRNDSCALEPD toward -inf, exact).
inline std::uint64_t digits8(__m512d x) {
    const __m512d d = _mm512_min_pd(_mm512_roundscale_pd(_mm512_abs_pd(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC),
                                    _mm512_set1_pd(127));
    return std::uint64_t(_mm_cvtsi128_si64(_mm512_cvtepi32_epi8(_mm512_castsi256_si512(_mm512_cvttpd_epi32(d)))));
}

// int8_gather_full's values, their digits written in its packed order.
void int8_digits_full(bool is_a, const double* base, std::size_t ld, const double* scale, std::int8_t* out,
                      std::size_t at) {
    std::int8_t* v = out + at;
    if (is_a) {
        scaled_runs<true>(base, ld, scale, [v](int o, int l0, __m512d x) {
            const std::uint64_t d = digits8(x);
            std::memcpy(v + packed_at(true, o, l0), &d, sizeof d);
        });
        return;
    }
    scaled_runs<false>(base, ld, scale, [v](int o, int l0, __m512d x) {
        const std::uint64_t d = digits8(x);
        const std::uint32_t lo = std::uint32_t(d), hi = std::uint32_t(d >> 32);
        std::memcpy(v + packed_at(false, o, l0), &lo, sizeof lo);
        std::memcpy(v + packed_at(false, o, l0 + 4), &hi, sizeof hi);
    });
}

// int8_fold's arithmetic (int8_residue_loops.inc), 32 entries a row in registers: the INT32 sums
// (and the kept residues) converted eight to a vector, times f, the residue by the same
// rounded quotient (VRNDSCALEPD, ties to even) and fused multiply-add, all exact integers, and
// VPMOVDB to bytes. GCC 12 built the generic loop in 256-bit halves with its values on the
// stack.
void int8_fold_avx512(int mi, const std::int32_t* sum, bool first, int times, const std::int8_t* src, int src_ld,
                      std::int8_t* dst, int dst_ld) {
    constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const bool is256 = mi == 256;
    const __m512d m = _mm512_set1_pd(mi), inv = _mm512_set1_pd(is256 ? 0x1p-8 : 1.0 / mi);
    const __m512d f = _mm512_set1_pd(times), top = _mm512_set1_pd(127);
    for (int r = 0; r < 32; ++r) {
        __m512i s[2] = {_mm512_loadu_si512(sum + r * 32), _mm512_loadu_si512(sum + r * 32 + 16)};
        if (!first) {
            const __m256i in = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + std::size_t(r) * src_ld));
            s[0] = _mm512_add_epi32(s[0], _mm512_cvtepi8_epi32(_mm256_castsi256_si128(in)));
            s[1] = _mm512_add_epi32(s[1], _mm512_cvtepi8_epi32(_mm256_extracti128_si256(in, 1)));
        }
        for (int h = 0; h < 2; ++h) {
            __m256i part[2];
            for (int q = 0; q < 2; ++q) {
                const __m256i v = q == 0 ? _mm512_castsi512_si256(s[h]) : _mm512_extracti64x4_epi64(s[h], 1);
                const __m512d x = _mm512_mul_pd(_mm512_cvtepi32_pd(v), f);
                const __m512d t = _mm512_roundscale_pd(_mm512_mul_pd(x, inv), kNearest);
                __m512d y = _mm512_fnmadd_pd(t, m, x);
                if (is256) y = _mm512_mask_sub_pd(y, _mm512_cmp_pd_mask(y, top, _CMP_GT_OQ), y, m);
                part[q] = _mm512_cvtpd_epi32(y);
            }
            const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(part[0]), part[1], 1);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + std::size_t(r) * dst_ld + h * 16), _mm512_cvtepi32_epi8(both));
        }
    }
}

// The residues from the values' bytes on AVX-512 VNNI where this CPU has it and the basis fits
// (int8_residues_vnni.h); else the FP64 loop above. The same bytes either way.
#if AMXBLAS_BUILT_AVX512_VNNI
void int8_residues_dispatch(const double* v, const CrtBasis& basis, std::int8_t* const* out, std::size_t at) {
    if (cpu_has_avx512_vnni() && int8_residues_vnni_takes(basis)) int8_residues_vnni(v, basis, out, at);
    else int8_residues(v, basis, out, at);
}
#else
constexpr auto int8_residues_dispatch = int8_residues;
#endif

}  // namespace

const Int8ResidueLoops& int8_residue_loops_avx512() {
    static const Int8ResidueLoops loops{int8_residues_dispatch, int8_digits, int8_fold_avx512, int8_crt_row,
                                        int8_row_counts,  int8_extremes, int8_scaled_sums, int8_extremes_and_sums,
                                        int8_gather_full, int8_digits_full};
    return loops;
}

}  // namespace amxblas::kernels::detail

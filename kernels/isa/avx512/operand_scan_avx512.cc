// The AVX-512 operand scan (kernels/isa/operand_scan_runs.h), built with the AVX-512 flags
// (sources.cmake); it runs only where isa_runs(Isa::avx512). It computes exactly what the portable
// scan computes: lanes that are nonfinite, zero or past the end are masked out of each
// reduction; |x| is compared as an integer, as there, and the lowest-bit subtraction is exact.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/isa/operand_scan_runs.h"

namespace amxblas::kernels::detail {

namespace {

// Horizontal reductions through memory (GCC 12's _mm512_reduce_* warn about undefined lanes).
template <typename U, typename V, typename Pick>
U reduce(V v, Pick pick) {
    alignas(64) U lane[sizeof(V) / sizeof(U)];
    std::memcpy(lane, &v, sizeof lane);
    U r = lane[0];
    for (const U x : lane) r = pick(r, x);
    return r;
}

template <typename U>
U umax(U a, U b) { return a > b ? a : b; }
template <typename U>
U umin(U a, U b) { return a < b ? a : b; }

}  // namespace

void scan_run_fp32_avx512(const float* x, std::size_t n, ScanAcc* acc) {
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
    const __m512i inf_bits = _mm512_set1_epi32(0x7f800000);
    const __m512i zero = _mm512_setzero_si512();
    __m512i vmax = zero, vmin = inf_bits;
    __mmask16 bad = 0;
    for (std::size_t i = 0; i < n; i += 16) {
        const __mmask16 live =
            n - i >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - i)) - 1);
        const __m512i u = _mm512_and_si512(_mm512_maskz_loadu_epi32(live, x + i), abs_mask);
        const __mmask16 finite = _mm512_mask_cmplt_epu32_mask(live, u, inf_bits);
        bad |= static_cast<__mmask16>(live & ~finite);
        const __mmask16 nonzero = _mm512_mask_test_epi32_mask(finite, u, u);
        vmax = _mm512_mask_max_epu32(vmax, finite, vmax, u);
        vmin = _mm512_mask_min_epu32(vmin, nonzero, vmin, u);
    }
    merge_fp32(bad != 0, reduce<std::uint32_t>(vmax, umax<std::uint32_t>),
               reduce<std::uint32_t>(vmin, umin<std::uint32_t>), acc);
}

void scan_run_fp64_avx512(const double* x, std::size_t n, ScanAcc* acc) {
    const __m512i abs_mask = _mm512_set1_epi64(0x7fffffffffffffffLL);
    const __m512i inf_bits = _mm512_set1_epi64(0x7ff0000000000000LL);
    const __m512i frac_mask = _mm512_set1_epi64((std::int64_t{1} << 52) - 1);
    const __m512i one = _mm512_set1_epi64(1);
    // Two independent sets of accumulators, so that consecutive vectors do not wait on each
    // other's max/min.
    __m512i vmax[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    __m512i vmin[2] = {inf_bits, inf_bits};
    __m512d vlow[2] = {_mm512_set1_pd(acc->min_lowbit), _mm512_set1_pd(acc->min_lowbit)};
    __mmask8 bad = 0;
    auto step = [&](int s, std::size_t i, __mmask8 live) {
        const __m512i u = _mm512_and_si512(_mm512_maskz_loadu_epi64(live, x + i), abs_mask);
        const __mmask8 finite = _mm512_mask_cmplt_epu64_mask(live, u, inf_bits);
        bad |= static_cast<__mmask8>(live & ~finite);
        const __mmask8 nonzero = _mm512_mask_test_epi64_mask(finite, u, u);
        vmax[s] = _mm512_mask_max_epu64(vmax[s], finite, vmax[s], u);
        vmin[s] = _mm512_mask_min_epu64(vmin[s], nonzero, vmin[s], u);
        // Lowest set bit: |x| minus |x| with that bit cleared; a power of two is its own.
        const __m512d a = _mm512_castsi512_pd(u);
        const __m512d cleared = _mm512_castsi512_pd(_mm512_and_si512(u, _mm512_sub_epi64(u, one)));
        const __mmask8 pow2 = _mm512_testn_epi64_mask(u, frac_mask);
        const __m512d low = _mm512_mask_mov_pd(_mm512_sub_pd(a, cleared), pow2, a);
        vlow[s] = _mm512_mask_min_pd(vlow[s], nonzero, vlow[s], low);
    };
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        step(0, i, 0xff);
        step(1, i + 8, 0xff);
    }
    for (; i < n; i += 8)
        step(0, i, n - i >= 8 ? 0xff : static_cast<__mmask8>((1u << (n - i)) - 1));
    merge_fp64(bad != 0,
               reduce<std::uint64_t>(_mm512_mask_max_epu64(vmax[0], 0xff, vmax[0], vmax[1]), umax<std::uint64_t>),
               reduce<std::uint64_t>(_mm512_mask_min_epu64(vmin[0], 0xff, vmin[0], vmin[1]), umin<std::uint64_t>),
               acc);
    acc->min_lowbit = reduce<double>(_mm512_mask_min_pd(vlow[0], 0xff, vlow[0], vlow[1]), umin<double>);
}

}  // namespace amxblas::kernels::detail

// AVX-512 reconstruction: the same function as reconstruct.cc, a 32-wide row in four zmm of
// doubles (or two of floats). Built with -mavx512f only; called only when
// cpu_has_avx512_split() says so.
#include <immintrin.h>

#include "kernels/microkernel.h"
#include "kernels/reconstruct.h"

namespace amxblas::kernels {
namespace {

void add_fp32_avx512(const float* tile, float* acc, int ldacc) {
    for (int r = 0; r < kTile; ++r) {
        float* a = acc + std::size_t(r) * ldacc;
        const float* t = tile + r * kTile;
        _mm512_storeu_ps(a, _mm512_add_ps(_mm512_loadu_ps(a), _mm512_loadu_ps(t)));
        _mm512_storeu_ps(a + 16, _mm512_add_ps(_mm512_loadu_ps(a + 16), _mm512_loadu_ps(t + 16)));
    }
}

void widen_add_avx512(const float* tiles, int count, double* acc, int ldacc) {
    for (int r = 0; r < kTile; ++r) {
        double* a = acc + std::size_t(r) * ldacc;
        __m512d s0 = _mm512_loadu_pd(a), s1 = _mm512_loadu_pd(a + 8);
        __m512d s2 = _mm512_loadu_pd(a + 16), s3 = _mm512_loadu_pd(a + 24);
        for (int q = 0; q < count; ++q) {
            const float* t = tiles + std::size_t(q) * kStepElems + r * kTile;
            s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm256_loadu_ps(t)));
            s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_loadu_ps(t + 8)));
            s2 = _mm512_add_pd(s2, _mm512_cvtps_pd(_mm256_loadu_ps(t + 16)));
            s3 = _mm512_add_pd(s3, _mm512_cvtps_pd(_mm256_loadu_ps(t + 24)));
        }
        _mm512_storeu_pd(a, s0);
        _mm512_storeu_pd(a + 8, s1);
        _mm512_storeu_pd(a + 16, s2);
        _mm512_storeu_pd(a + 24, s3);
    }
}

}  // namespace

const ReconstructKernels& reconstruct_kernels_avx512() {
    static const ReconstructKernels k{add_fp32_avx512, widen_add_avx512};
    return k;
}

}  // namespace amxblas::kernels

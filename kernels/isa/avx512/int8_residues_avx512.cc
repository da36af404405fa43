// The INT8 engine's block loops, AVX-512 build (kernels/isa/int8_residue_loops.h): eight doubles
// a vector (sources.cmake), and the gather of whole blocks in registers. Used only where
// isa_runs(Isa::avx512).
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/isa/avx512/transpose_avx512.h"
#include "kernels/isa/int8_residue_loops.h"

namespace amxblas::kernels::detail {

#include "kernels/int8/int8_residue_loops.inc"
#include "kernels/int8/int8_certificate_row.inc"
#include "kernels/int8/int8_facts_loops.inc"

namespace {

static_assert(kInt8BlockOuter == 32 && kInt8BlockDepth == 64 && kInt8QuadColumns == 16, "the loops below");

// A: rows o are contiguous in memory, the packed block holds each row's 64 K values in a run
// (v[o * 64 + l]): 8 x 8 transposes. B: each column's K values are contiguous, the packed block
// holds K quads of 16 columns (v[(o / 16) * 1024 + (l / 4) * 64 + (o % 16) * 4 + l % 4]): each
// load of 8 K values is two quads, stored as two halves.
void int8_gather_full(bool is_a, const double* base, std::size_t ld, const double* scale, double* v) {
    if (is_a) {
        for (int o0 = 0; o0 < kInt8BlockOuter; o0 += 8) {
            const __m512d s = _mm512_loadu_pd(scale + o0);
            for (int l0 = 0; l0 < kInt8BlockDepth; l0 += 8) {
                __m512d r[8];
                for (int i = 0; i < 8; ++i) r[i] = _mm512_mul_pd(_mm512_loadu_pd(base + o0 + (l0 + i) * ld), s);
                avx512::transpose8x8_64(r);
                for (int j = 0; j < 8; ++j) _mm512_storeu_pd(v + (o0 + j) * kInt8BlockDepth + l0, r[j]);
            }
        }
        return;
    }
    for (int o = 0; o < kInt8BlockOuter; ++o) {
        const __m512d s = _mm512_set1_pd(scale[o]);
        const double* col = base + o * ld;
        double* dst = v + (o / kInt8QuadColumns) * (kInt8BlockDepth * kInt8QuadColumns) + (o % kInt8QuadColumns) * 4;
        for (int l0 = 0; l0 < kInt8BlockDepth; l0 += 8) {
            const __m512d x = _mm512_mul_pd(_mm512_loadu_pd(col + l0), s);
            _mm256_storeu_pd(dst + (l0 / 4) * (4 * kInt8QuadColumns), _mm512_castpd512_pd256(x));
            _mm256_storeu_pd(dst + (l0 / 4 + 1) * (4 * kInt8QuadColumns), _mm512_extractf64x4_pd(x, 1));
        }
    }
}

}  // namespace

const Int8ResidueLoops& int8_residue_loops_avx512() {
    static const Int8ResidueLoops loops{int8_residues, int8_digits,      int8_fold,       int8_crt_row,
                                             int8_row_counts, int8_extremes, int8_scaled_sums, int8_gather_full};
    return loops;
}

}  // namespace amxblas::kernels::detail

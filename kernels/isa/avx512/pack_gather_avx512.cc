// The AVX-512 gathers of pack_gather.h: the transposes a block needs done in registers, 64
// bytes at a time. Built with -mavx512f -mavx512bw -mavx512dq -mavx512vl only; called only
// when cpu_has_avx512_split() says so.
#include <immintrin.h>

#include "kernels/isa/microkernel.h"
#include "kernels/isa/pack_gather.h"
#include "kernels/isa/split.h"
#include "kernels/isa/avx512/split_avx512.h"
#include "kernels/isa/avx512/transpose_avx512.h"

namespace amxblas::kernels {
namespace {

inline void load(__m512& r, const void* p) { r = _mm512_loadu_ps(static_cast<const float*>(p)); }
inline void load(__m512d& r, const void* p) { r = _mm512_loadu_pd(static_cast<const double*>(p)); }
inline void store(void* p, __m512 r) { _mm512_store_ps(static_cast<float*>(p), r); }
inline void store(void* p, __m512d r) { _mm512_store_pd(static_cast<double*>(p), r); }

// (e0[0], e1[0], e0[1], e1[1], ...): the low and the high half of the lanes.
inline __m512 interleave_lo(__m512 e0, __m512 e1) {
    return _mm512_permutex2var_ps(e0, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), e1);
}
inline __m512 interleave_hi(__m512 e0, __m512 e1) {
    return _mm512_permutex2var_ps(e0, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), e1);
}
inline __m512d interleave_lo(__m512d e0, __m512d e1) {
    return _mm512_permutex2var_pd(e0, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), e1);
}
inline __m512d interleave_hi(__m512d e0, __m512d e1) {
    return _mm512_permutex2var_pd(e0, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), e1);
}

// The register of 64 / sizeof(T) values of T (for decltype).
inline __m512 register_of(float) { return _mm512_setzero_ps(); }
inline __m512d register_of(double) { return _mm512_setzero_pd(); }

// L x L units of 64 / L bytes, one row of units per register := its transpose.
template <int L, typename V>
inline void transpose(V q[L]) {
    if constexpr (L == 16) avx512::transpose16x16_32(q);
    else if constexpr (L == 8) avx512::transpose8x8_64(q);
    else avx512::transpose4x4_128(q);
}

// Where the gathers put each register of the block: put(e, r) receives the 64 bytes that
// belong at element e of the packed order (e a multiple of 64 / sizeof(T)).
template <typename T>
struct TileSink {  // into the staging tile
    T* tile;
    template <typename V>
    void put(int e, V r) const {
        store(tile + e, r);
    }
};

struct SplitSink {  // split at once (split_avx512.h), each slice's 16 values to their place
    bf16_t* s0;
    bf16_t* s1;
    bf16_t* s2;
    void put(int e, __m512 r) const {
        __m256i h0, h1, h2;
        avx512::split_fp32_16(r, &h0, &h1, &h2);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s0 + e), h0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s1 + e), h1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s2 + e), h2);
    }
    void put(int e, __m512d r) const { put(e, _mm512_castpd_ps(r)); }
};

// Scaled by rows (A) or columns (B) on the way into the staging tile (split.h, BlockScale;
// the products of scale_fp64 in its order), keeping min(pattern of |y|) - 1 (a zero wraps to
// the largest) for the check "nonzero and below 2^-1022": finite and infinite magnitudes order
// as their patterns do, and a NaN's pattern is above them all, as the check needs.
template <bool IsA, bool TwoStep>
struct ScaleSink {
    double* tile;
    const BlockScale& bs;
    __m512d g1[2][4], g2[2][4];  // B: the factors of the four registers of a row of each half
    mutable __m512i low = _mm512_set1_epi64(-1);
    ScaleSink(double* t, const BlockScale& b) : tile(t), bs(b) {
        if (IsA) return;
        const __m512i lo = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), hi = _mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7);
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 2; ++q) {
                const __m512d a1 = _mm512_loadu_pd(bs.f1 + 16 * h + 8 * q), a2 = _mm512_loadu_pd(bs.f2 + 16 * h + 8 * q);
                g1[h][2 * q] = _mm512_permutexvar_pd(lo, a1);
                g1[h][2 * q + 1] = _mm512_permutexvar_pd(hi, a1);
                g2[h][2 * q] = _mm512_permutexvar_pd(lo, a2);
                g2[h][2 * q + 1] = _mm512_permutexvar_pd(hi, a2);
            }
    }
    void put(int e, __m512d r) const {
        __m512d y;
        if (IsA) {
            y = _mm512_mul_pd(r, _mm512_set1_pd(bs.f1[e / kTile]));
            if (TwoStep) y = _mm512_mul_pd(y, _mm512_set1_pd(bs.f2[e / kTile]));
        } else {
            const int h = e / kHalfElems, q = (e % kTile) / 8;
            y = _mm512_mul_pd(r, g1[h][q]);
            if (TwoStep) y = _mm512_mul_pd(y, g2[h][q]);
        }
        const __m512i bits = _mm512_and_si512(_mm512_castpd_si512(y), _mm512_set1_epi64(0x7FFFFFFFFFFFFFFF));
        low = _mm512_min_epu64(low, _mm512_sub_epi64(bits, _mm512_set1_epi64(1)));
        _mm512_store_pd(tile + e, y);
    }
    bool below_normal() const {
        return _mm512_cmplt_epu64_mask(low, _mm512_set1_epi64(0x000FFFFFFFFFFFFF)) != 0;  // DBL_MIN's pattern - 1
    }
};

// The transposing gathers, a_n and b_n, in units of 64 / L bytes (one value of A; one K pair
// of B): unit (u, v) of src, at byte u * unit + v * ld * sizeof(T), goes to byte
// v * unit + u * kTile * sizeof(T) of the packed block, for u < rows and v < cols, as L x L
// transposes of L registers V. Each register put starts at a multiple of L units.
template <typename V, int L, typename T, typename Sink>
void transpose_units(const T* src, std::size_t ld, int dst_first, int rows, int cols, const Sink& sink) {
    constexpr int unit = 64 / L;
    const char* s = reinterpret_cast<const char*>(src);
    const std::size_t src_stride = ld * sizeof(T);
    for (int u = 0; u < rows; u += L)
        for (int v = 0; v < cols; v += L) {
            V q[L];
            for (int i = 0; i < L; ++i) load(q[i], s + u * unit + (v + i) * src_stride);
            transpose<L>(q);
            for (int i = 0; i < L; ++i) sink.put(dst_first + (u + i) * kTile + v * unit / int(sizeof(T)), q[i]);
        }
}

template <typename T, typename Sink>
void gather_to(BlockSource kind, const T* src, std::size_t ld, const Sink& sink) {
    using V = decltype(register_of(T{}));  // L values of T
    constexpr int L = 64 / sizeof(T);
    switch (kind) {
        case BlockSource::a_t:  // a copy of 32 rows
            for (int r = 0; r < kTile; ++r)
                for (int q = 0; q < kTile; q += L) {
                    V x;
                    load(x, src + r * ld + q);
                    sink.put(r * kTile + q, x);
                }
            return;
        case BlockSource::a_n:
            transpose_units<V, L>(src, ld, 0, kTile, kTile, sink);
            return;
        case BlockSource::b_n:
            // Half h: its 16 columns of 16 K pairs (L / 2 pairs to a register) become 16 rows
            // of pairs.
            for (int h = 0; h < 2; ++h) transpose_units<__m512d, L / 2>(src + 16 * h * ld, ld, h * kHalfElems, 16, 16, sink);
            return;
        case BlockSource::b_t:  // rows 2p and 2p + 1 of op(B) interleave into row p of pairs
            for (int p = 0; p < kTile / 2; ++p)
                for (int c = 0; c < kTile; c += L) {
                    V e0, e1;
                    load(e0, src + c + (2 * p) * ld);
                    load(e1, src + c + (2 * p + 1) * ld);
                    const int at = (c / 16) * kHalfElems + p * kTile + (c % 16) * 2;
                    sink.put(at, interleave_lo(e0, e1));
                    sink.put(at + L, interleave_hi(e0, e1));
                }
            return;
    }
}

}  // namespace

template <typename T>
void gather_avx512(BlockSource kind, const T* src, std::size_t ld, T* tile) {
    gather_to(kind, src, ld, TileSink<T>{tile});
}

template <bool IsA, bool TwoStep>
bool gather_scale_t(BlockSource kind, const double* src, std::size_t ld, const BlockScale& bs, double* tile) {
    const ScaleSink<IsA, TwoStep> sink(tile, bs);
    gather_to(kind, src, ld, sink);
    return sink.below_normal();
}

bool gather_scale_fp64_avx512(BlockSource kind, const double* src, std::size_t ld, bool is_a, const BlockScale& bs,
                              double* tile) {
    if (is_a) return bs.two_step ? gather_scale_t<true, true>(kind, src, ld, bs, tile) : gather_scale_t<true, false>(kind, src, ld, bs, tile);
    return bs.two_step ? gather_scale_t<false, true>(kind, src, ld, bs, tile) : gather_scale_t<false, false>(kind, src, ld, bs, tile);
}

void gather_split_fp32_avx512(BlockSource kind, const float* src, std::size_t ld, bf16_t* s0, bf16_t* s1, bf16_t* s2) {
    gather_to(kind, src, ld, SplitSink{s0, s1, s2});
}

template void gather_avx512(BlockSource, const float*, std::size_t, float*);
template void gather_avx512(BlockSource, const double*, std::size_t, double*);

}  // namespace amxblas::kernels

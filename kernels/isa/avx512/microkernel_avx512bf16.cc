// AVX-512 BF16 micro-kernel (VDPBF16PS) on the packed layouts of microkernel.h.
//
// Accumulation follows the shape of TDPBF16PS: per output, per product and per K step (16
// pairs) the pairs are summed by VDPBF16PS into a temporary that starts at zero, and only
// that partial sum is added into the running accumulator (one FP32 add per output, product
// and K step). A chain of VDPBF16PS straight into the accumulator would round every pair
// against the large running sum and roughly double the FP32 emulation's error. The order
// inside one K step still differs from the SDM's two chains (even/odd BF16 of each pair), so
// random data is not bitwise equal to the reference; exact data (small integers) is.
//
// Register block: 4 rows x 32 columns of the 32x32 tile = 8 zmm accumulators (acc[r][h]:
// row r, columns 16h..16h+15) and 8 zmm temporaries. Per K pair p: two zmm loads of the
// VNNI B rows (p of half 0 and half 1; each dword lane is the pair (B(2p, n), B(2p+1, n))),
// then per row one 32-bit broadcast of the A pair (A(r, 2p), A(r, 2p+1)) straight from
// memory and two VDPBF16PS into the temporaries. That is 8 independent dot chains, enough
// to cover the instruction's latency, with 19 of 32 zmm live. The eight row blocks of the
// tile run one after another; each keeps its accumulators in registers across all K steps
// (and, for the chain, all six products) and stores once.
// The add into the accumulator flushes a denormal result to zero (with its sign), as the
// dot-product instructions do, whatever MXCSR says.
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16; used only when
// cpu_has_avx512_bf16(). The table's INT8 product is the VNNI kernel of
// microkernel_avx512_int8.cc where this CPU has VNNI, else the reference one.
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/microkernel.h"
#if AMXBLAS_BUILT_AVX512_VNNI
#include "kernels/isa/avx512/microkernel_avx512_int8.h"
#include "kernels/runtime/cpu_features.h"
#endif

namespace amxblas::kernels {
namespace {

constexpr int kRows = 4;                 // rows per register block
constexpr int kPairs = kTile / 2;        // K pairs per K step
constexpr int kHalfCols = 16;            // columns per zmm

inline __m512 dot(__m512 acc, __m512i a, __m512i b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}

inline int load_pair(const bf16_t* p) {
    int v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// acc + t, rounded to nearest even, a denormal result flushed to a zero of its sign. Both
// inputs are normal or zero, so a denormal sum is an exact cancellation; x86's FTZ would
// flush it, and so does this.
inline __m512 add_ftz(__m512 acc, __m512 t) {
    const __m512 r = _mm512_add_ps(acc, t);
    const __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(r), _mm512_set1_ps(0x1p-126f), _CMP_LT_OQ);
    return _mm512_mask_and_ps(r, tiny, r, _mm512_set1_ps(-0.0f));
}

// acc += A(row0..row0+3, K step) * B(K step) for one packed block pair: the 16 pairs are
// summed into zeroed temporaries, which are then added into acc.
inline void step(__m512 (&acc)[kRows][2], const bf16_t* a, const bf16_t* b) {
    // Hide the pointers' values from the optimiser: in the chain the same B (or A) block is
    // used by up to three steps, and GCC would otherwise keep its 32 zmm rows live across them
    // and spill them to the stack instead of reloading from L1.
    __asm__("" : "+r"(a), "+r"(b));
    __m512 t[kRows][2];
    for (auto& row : t) row[0] = row[1] = _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int p = 0; p < kPairs; ++p) {
        const __m512i b0 = _mm512_loadu_si512(b + p * kTile);
        const __m512i b1 = _mm512_loadu_si512(b + kHalfElems + p * kTile);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
            const __m512i ar = _mm512_set1_epi32(load_pair(a + r * kTile + 2 * p));
            t[r][0] = dot(t[r][0], ar, b0);
            t[r][1] = dot(t[r][1], ar, b1);
        }
    }
    for (int r = 0; r < kRows; ++r) {
        acc[r][0] = add_ftz(acc[r][0], t[r][0]);
        acc[r][1] = add_ftz(acc[r][1], t[r][1]);
    }
}

inline void store(const __m512 (&acc)[kRows][2], float* c, int ldc) {
    for (int r = 0; r < kRows; ++r) {
        _mm512_storeu_ps(c + r * ldc, acc[r][0]);
        _mm512_storeu_ps(c + r * ldc + kHalfCols, acc[r][1]);
    }
}

void fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc) {
    for (int rb = 0; rb < kTile; rb += kRows) {
        __m512 acc[kRows][2];
        for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
        const std::size_t ao = std::size_t(rb) * kTile;
        for (int s = 0; s < ksteps; ++s) {
            const std::size_t o = std::size_t(s) * kStepElems;
            // Eq. (19): A1B1, A1B0, A2B0, A0B0, A0B1, A0B2.
            step(acc, p.a[1] + o + ao, p.b[1] + o);
            step(acc, p.a[1] + o + ao, p.b[0] + o);
            step(acc, p.a[2] + o + ao, p.b[0] + o);
            step(acc, p.a[0] + o + ao, p.b[0] + o);
            step(acc, p.a[0] + o + ao, p.b[1] + o);
            step(acc, p.a[0] + o + ao, p.b[2] + o);
        }
        store(acc, c + rb * ldc, ldc);
    }
}

void product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc) {
    for (int rb = 0; rb < kTile; rb += kRows) {
        __m512 acc[kRows][2];
        for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
        for (int s = 0; s < ksteps; ++s) {
            const std::size_t o = std::size_t(s) * kStepElems;
            step(acc, a + o + std::size_t(rb) * kTile, b + o);
        }
        store(acc, c + rb * ldc, ldc);
    }
}

}  // namespace

MicroKernels avx512_microkernels() {
    MicroKernels k = reference_microkernels();
    k.geometry = kAmxGeometry;  // the layout step() reads (two 16-column B groups per K step)
    k.fp32_chain = fp32_chain;
    k.product = product;
    // VPDPBUSD is AVX512_VNNI, not part of AVX512_BF16: asked at run time, whatever CPUs are
    // known to pair them. Without it the reference entries above stay.
#if AMXBLAS_BUILT_AVX512_VNNI
    if (cpu_has_avx512_vnni()) {
        k.int8_geometry = kAmxInt8Geometry;  // the layout avx512_vnni_product_s8 reads
        k.product_s8 = avx512_vnni_product_s8;
    }
#endif
    return k;
}

}  // namespace amxblas::kernels

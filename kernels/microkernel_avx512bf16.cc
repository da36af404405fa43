// AVX-512 BF16 micro-kernel (VDPBF16PS) on the packed layouts of microkernel.h.
//
// Register block: 8 rows x 32 columns of the 32x32 tile = 16 zmm accumulators (acc[r][h]:
// row r, columns 16h..16h+15). Per K pair p: two zmm loads of the VNNI B rows (p of half 0
// and half 1; each dword lane is the pair (B(2p, n), B(2p+1, n))), then per row one 32-bit
// broadcast of the A pair (A(r, 2p), A(r, 2p+1)) straight from memory and two VDPBF16PS.
// That is 16 dot instructions per 2 vector loads + 8 broadcasts, with 19 of 32 zmm live.
// The four row blocks of the tile run one after another; each keeps its accumulators in
// registers across all K steps (and, for the chain, all six products) and stores once.
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16; used only when
// cpu_has_avx512_bf16().
#include <immintrin.h>

#include <cstring>

#include "kernels/microkernel.h"

namespace amxblas::kernels {
namespace {

constexpr int kRows = 8;                 // rows per register block
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

// acc += A(row0..row0+7, K step) * B(K step) for one packed block pair.
inline void step(__m512 (&acc)[kRows][2], const bf16_t* a, const bf16_t* b) {
    // Hide the pointers' values from the optimiser: in the chain the same B (or A) block is
    // used by up to three steps, and GCC would otherwise keep its 32 zmm rows live across them
    // and spill them to the stack instead of reloading from L1.
    __asm__("" : "+r"(a), "+r"(b));
#pragma GCC unroll 16
    for (int p = 0; p < kPairs; ++p) {
        const __m512i b0 = _mm512_loadu_si512(b + p * kTile);
        const __m512i b1 = _mm512_loadu_si512(b + kHalfElems + p * kTile);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
            const __m512i ar = _mm512_set1_epi32(load_pair(a + r * kTile + 2 * p));
            acc[r][0] = dot(acc[r][0], ar, b0);
            acc[r][1] = dot(acc[r][1], ar, b1);
        }
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
    k.fp32_chain = fp32_chain;
    k.product = product;
    return k;
}

}  // namespace amxblas::kernels

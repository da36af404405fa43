// The portable scalar micro-kernel for any tile geometry (microkernel.h): the oracle every
// fast kernel is checked against. microkernel_reference.cc instantiates it for kAmxGeometry
// (the reference backend's table); a test instantiates it for another geometry
// (tests/kernels/bf16/kernels_geometry_test.cc). A file that includes this header must be built
// with -ffp-contract=off (see below), as microkernel_reference.cc is.
//
// It follows the Intel SDM's Operation section of TDPBF16PS: for each output element and each
// instruction (one K step: kstep / 2 BF16 pairs, 16 on AMX), two FP32 chains start at zero,
// one over the first BF16 of every pair and one over the second,
//     even = fma(a[2k],   b[2k],   even)      k = 0..kstep/2 - 1
//     odd  = fma(a[2k+1], b[2k+1], odd)
// and only then is their sum added to the destination: dst = dst + (even + odd). Every step
// has DAZ = FTZ = 1 and rounds to nearest even; MXCSR is not consulted. (Older manuals and the
// intrinsics guide show a single chain straight into dst; the two orders round differently.
// The trap-and-emulate harness in amxemu/ implements the same SDM text, so FP32 results of
// this kernel and of the AMX kernel under the harness are bitwise equal.)
// Built with -ffp-contract=off so that the compiler does not fuse or reorder the steps.
//
// A product of two BF16 values has at most 16 significant bits, so it is exact in FP32 unless
// it leaves the normal range; then `acc + a*b` with one FP32 rounding IS the FMA. Only a
// product outside [2^-126, 2^127] needs the real FMA (std::fmaf rounds once, like the
// hardware); panels whose exponents cannot reach that range never take that path.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/isa/microkernel.h"

namespace amxblas::kernels::reference_kernel {

constexpr float kF32MinNormal = FLT_MIN;            // 2^-126
constexpr int kBf16ExpBias = 127;
// Exponent sums that keep every product normal and finite: |a*b| in [2^(ea+eb), 2^(ea+eb+2)).
constexpr int kSafeExpSumMin = -126;
constexpr int kSafeExpSumMax = 125;

inline float daz(bf16_t h) { return bf16_is_denormal(h) ? 0.0f : bf16_to_float(h); }

inline float ftz(float x) { return std::fabs(x) < kF32MinNormal ? std::copysign(0.0f, x) : x; }

// The range of the unbiased exponents of a block's normal BF16 values (lo > hi: none), and
// whether it holds an Inf or NaN. Branch-free over the biased exponent field, so that the
// compiler vectorizes it (packed 16-bit compares and selects): it reads every input value of
// every K step, and written with branches it took half of the kernel's time.
struct ExpRange {
    int lo = 1000, hi = -1000;
    bool special = false;  // an Inf or NaN input: take the exact path
    template <int N>
    void add_all(const bf16_t* h) {
        // Zero and denormal values (biased exponent 0) count for neither end; Inf and NaN (0xFF)
        // set `special`.
        std::int16_t biased_lo = 0xFF, biased_hi = 0, biased_top = 0;
        for (int i = 0; i < N; ++i) {
            const std::int16_t biased = std::int16_t((h[i] >> 7) & 0xFF);
            const std::int16_t for_lo = biased == 0 ? std::int16_t(0xFF) : biased;
            const std::int16_t for_hi = biased == 0xFF ? std::int16_t(0) : biased;
            biased_lo = for_lo < biased_lo ? for_lo : biased_lo;
            biased_hi = for_hi > biased_hi ? for_hi : biased_hi;
            biased_top = biased > biased_top ? biased : biased_top;
        }
        if (biased_lo <= biased_hi) {
            lo = biased_lo - kBf16ExpBias;
            hi = biased_hi - kBf16ExpBias;
        }
        special = biased_top == 0xFF;
    }
    bool empty() const { return lo > hi; }
};

// One FMA step with an exact FMA, for products that leave the normal FP32 range. x86 detects
// tininess after rounding: a result that rounds to exactly 2^-126 from an exact value below
// 2^-126 - 2^-151 is tiny and flushed. The exact value a*b + acc is exact in double here.
inline float step_exact(float acc, float a, float b) {
    const float r = std::fmaf(a, b, acc);
    const float mag = std::fabs(r);
    if (mag < kF32MinNormal) return std::copysign(0.0f, r);
    if (mag == kF32MinNormal && std::fabs(double(a) * double(b) + double(acc)) < 0x1.ffffffp-127)
        return std::copysign(0.0f, r);
    return r;
}

// The kernel for geometry (MR, NR, KS, G) (the template takes the numbers: a class-type
// template argument is C++20).
template <int MR, int NR, int KS, int G>
struct Kernel {
    static constexpr TileGeometry kGeometry{MR, NR, KS, G};
    static_assert(geometry_ok(kGeometry), "see microkernel.h");
    static constexpr int kPairs = KS / 2;  // K pairs in one K step
    static constexpr int kA = MR * KS, kB = KS * NR, kC = MR * NR;

    // Whether one row of an A block is all zeros once denormals count as zero.
    static bool all_zero_after_daz(const bf16_t* row) {
        int exponent_bits = 0;
        for (int k = 0; k < KS; ++k) exponent_bits |= row[k] & 0x7F80;
        return exponent_bits == 0;
    }

    // One MR x NR product of one K step (on AMX: four TDPBF16PS on the 16x16 quadrants), into
    // acc (row-major, MR x NR).
    static void tile_step(const bf16_t* a, const bf16_t* b, float* acc) {
        ExpRange ra, rb;
        ra.add_all<kA>(a);
        rb.add_all<kB>(b);
        const bool none = ra.empty() || rb.empty();  // every product is +-0
        const bool fast = !ra.special && !rb.special &&
                          (none || (ra.lo + rb.lo >= kSafeExpSumMin && ra.hi + rb.hi <= kSafeExpSumMax));
        // No flush needed inside the step: every product is a multiple of 2^q, q = ra.lo + rb.lo
        // - 14 (a normal BF16 value is an 8-bit integer times 2^(e - 7)), so every exact partial
        // sum is one too, and so is its FP32 rounding (below 2^(q + 24) it is exact; above, the
        // spacing of FP32 values there is a multiple of 2^q). A nonzero partial sum is then at
        // least 2^q >= 2^-126: normal, and ftz() leaves it alone. With no product but +-0, the
        // chains stay +0 (RNE: +0 + -0 = +0).
        const bool normal_sums = fast && (none || ra.lo + rb.lo - 14 >= kSafeExpSumMin);
        float bv[2][kPairs][NR];  // bv[e][p][n] = B(2p+e, n) after DAZ
        for (int h = 0; h < NR / G; ++h)
            for (int p = 0; p < kPairs; ++p)
                for (int n = 0; n < G; ++n)
                    for (int e = 0; e < 2; ++e) bv[e][p][h * G + n] = daz(b[h * KS * G + p * 2 * G + n * 2 + e]);
        for (int m = 0; m < MR; ++m) {
            float even[NR] = {}, odd[NR] = {};
            // A row of zeros (the padding rows of a short block) in a step without Inf or NaN:
            // every product is +-0 and the chains stay +0, as above.
            const bool zero_row = fast && all_zero_after_daz(a + m * KS);
            for (int p = 0; p < kPairs && !zero_row; ++p) {
                const float a0 = daz(a[m * KS + 2 * p]);
                const float a1 = daz(a[m * KS + 2 * p + 1]);
                if (normal_sums) {
                    for (int n = 0; n < NR; ++n) {
                        even[n] = even[n] + a0 * bv[0][p][n];
                        odd[n] = odd[n] + a1 * bv[1][p][n];
                    }
                } else if (fast) {
                    for (int n = 0; n < NR; ++n) {
                        even[n] = ftz(even[n] + a0 * bv[0][p][n]);
                        odd[n] = ftz(odd[n] + a1 * bv[1][p][n]);
                    }
                } else {
                    for (int n = 0; n < NR; ++n) {
                        even[n] = step_exact(even[n], a0, bv[0][p][n]);
                        odd[n] = step_exact(odd[n], a1, bv[1][p][n]);
                    }
                }
            }
            float* row = acc + m * NR;
            for (int n = 0; n < NR; ++n) row[n] = ftz(row[n] + ftz(even[n] + odd[n]));
        }
    }

    static void store(const float* acc, float* c, int ldc) {
        for (int m = 0; m < MR; ++m) std::memcpy(c + m * ldc, acc + m * NR, NR * sizeof(float));
    }

    static void fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc) {
        // Eq. (19): each product shares one operand with the previous one.
        static constexpr int kChain[6][2] = {{1, 1}, {1, 0}, {2, 0}, {0, 0}, {0, 1}, {0, 2}};
        alignas(64) float acc[kC] = {};
        for (int s = 0; s < ksteps; ++s)
            for (const auto& ij : kChain) tile_step(p.a[ij[0]] + s * kA, p.b[ij[1]] + s * kB, acc);
        store(acc, c, ldc);
    }

    static void product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc) {
        alignas(64) float acc[kC] = {};
        for (int s = 0; s < ksteps; ++s) tile_step(a + s * kA, b + s * kB, acc);
        store(acc, c, ldc);
    }

    static void nothing() {}

    static MicroKernels table() { return MicroKernels{kGeometry, nothing, nothing, fp32_chain, product}; }
};

}  // namespace amxblas::kernels::reference_kernel

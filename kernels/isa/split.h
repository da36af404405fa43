// Splitting FP32/FP64 values into BF16 slices (paper Sections 4.2 and 4.3).
//
// The split works on a contiguous run of values (the packer gathers each 32x32 block into a
// staging tile first and hands it here, so split and pack are fused and the slices are written
// straight into the packed buffers). There are two implementations, portable and AVX-512;
// they compute the same function bit for bit (tests/kernels checks that), and split_kernels()
// picks one per process from the CPU.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/common/bf16.h"
#include "kernels/common/gemm_types.h"
#include "kernels/isa/pack_gather.h"

namespace amxblas::kernels {

constexpr int kOzakiRho = 53 - 8;  // rho = 45: significand gap between FP64 and BF16

// The per-slice Ozaki shifts of one operand: sigma[r] = 0.75 * 2^(v(r) + rho) with
// v(r) = ceil(log2(max |X^(r)|)) over the whole operand (after the packer's exact per-row or
// per-column power-of-two scaling, pack.h); slices r >= active are zero because the residual
// X^(active) is zero everywhere (or below 2^kFp64MinSliceExp, see pack.h).
// Each slice is stored normalised: bf16(Z_r * norm[r]) with norm[r] = 2^-v(r), an exact
// multiple of 2^-8 of magnitude <= 1, so a nonzero slice entry is always a normal BF16 number
// in [2^-8, 1]; the driver multiplies the product of slices (i, j) by 2^(v_A(i) + v_B(j)).
// Only the first `slices` slices are written (the route's depth d).
// The 0.75 (Ozaki's original extraction constant) keeps x + sigma in one binade for |x| <= 2^v whatever the sign of x, so every entry of slice r
// is on the 2^(v(r)-8) grid and v(r+1) <= v(r) - 9. With sigma = 2^(v+rho) instead, a
// positive x lands on 2^(v-7) and each slice keeps only 8 bits: about 2^-8 per diagonal, 5.7x-22x
// off Table 4, which this matches (tests/kernels/bf16/kernels_accuracy_test.cc).
struct Fp64Scales {
    int active = 0;
    int slices = kFp64Slices;
    double sigma[kFp64Slices] = {};
    double norm[kFp64Slices] = {};
};

// max |A^(r)| over a run of values, A^(r) from A^(0) = x with sigma[0..r-1] (Eq. 14), and
// whether any input was Inf or NaN (the max alone would lose a NaN).
struct AbsMax {
    double value = 0;
    bool nonfinite = false;
};

enum class SliceStatus : int { ok = 0, subnormal = 1, overflow = 2 };

// The exact power-of-two scaling of one gathered FP64 block (pack.h): the multiplier of row r
// (A) or column c (B) of the block, in two factors so that a row of subnormal entries
// (e < -1023, 2^-e not a double) is scaled up in two exact steps; f2 = 1 otherwise, and
// two_step says whether any f2 is not 1 (x * f1 * 1 is x * f1, so the second product is
// skipped when none is).
struct BlockScale {
    double f1[32], f2[32];
    bool two_step;
};

// |x| of a double as its bit pattern (the sign cleared): finite magnitudes order as their
// patterns do, and Inf and NaN lie above every finite one.
constexpr std::uint64_t kF64AbsMask = 0x7FFFFFFFFFFFFFFFull;
constexpr std::uint64_t kF64InfBits = 0x7FF0000000000000ull;

struct SplitKernels {
    // Eq. (8): s_r = bf16_rne(x^(r)), x^(r+1) = x^(r) - s_r in FP32, r = 0, 1, 2.
    void (*fp32)(const float* x, std::size_t n, bf16_t* s0, bf16_t* s1, bf16_t* s2);
    AbsMax (*fp64_absmax)(const double* x, std::size_t n, const Fp64Scales& sc, int r);
    // Eqs. (13)-(14): writes slices 0..sc.slices-1 (zeros from sc.active on), normalised by
    // sc.norm. Reports the worst nonzero normalised slice that is not a normal BF16 value (a
    // safety net: normalisation puts every nonzero slice entry in [2^-8, 1]).
    // With resid_max (else nullptr), also resid_max[t] := max(resid_max[t], max |x^(t)|) for
    // t <= sc.slices: the residual before slice t (t = sc.slices: what the written slices
    // leave). The packer speculates on the scales and checks them with these (kernels/pack/pack_fp64.cc); the
    // FP64 certificate bounds the truncation with them.
    SliceStatus (*fp64)(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                        double* resid_max);
    // The FP64 exponent scans (pack.h, fp64_outer_exponents), on |x| patterns: the largest
    // over a run; and across runs, m[o] := max(m[o], patterns of |x[o + l * ld]|, l < len) for
    // o < n (each run read front to back).
    std::uint64_t (*absbits_max)(const double* x, std::size_t n);
    void (*absbits_max_lanes)(const double* x, std::size_t ld, int len, int n, std::uint64_t* m);
    // tile (a gathered A or B block in the packed order, pack_gather.h) *= its row's (A) or
    // column's (B) f1, then f2 (when bs.two_step); returns whether a nonzero product fell below
    // 2^-1022 (and so may have been rounded).
    bool (*scale_fp64)(bool is_a, const BlockScale& bs, double* tile);
    // The packer's gathers (pack_gather.h).
    void (*gather_fp32)(BlockSource src_kind, const float* src, std::size_t ld, float* tile);
    void (*gather_fp64)(BlockSource src_kind, const double* src, std::size_t ld, double* tile);
    // A full FP32 block gathered and split into its three packed blocks s0, s1, s2: what
    // gather_fp32 then fp32 over the tile give. The AVX-512 one (pack_gather_avx512.cc) splits
    // each register as the gather leaves it, with no staging tile.
    void (*gather_split_fp32)(BlockSource src_kind, const float* src, std::size_t ld, bf16_t* s0, bf16_t* s1,
                              bf16_t* s2);
    // A full FP64 block gathered into tile and scaled (scale_fp64) on the way: what gather_fp64
    // then scale_fp64 give, the same return included.
    bool (*gather_scale_fp64)(BlockSource src_kind, const double* src, std::size_t ld, bool is_a, const BlockScale& bs,
                              double* tile);
};

// Members of the tables below that their rows' folders build with their own flags: the avx2
// row's FP64 split (kernels/isa/avx2/split_avx2.cc) and the avx512 row's fused gathers.
SliceStatus fp64_split_avx2(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                            double* resid_max);
bool gather_scale_fp64_avx512(BlockSource src_kind, const double* src, std::size_t ld, bool is_a, const BlockScale& bs,
                              double* tile);
void gather_split_fp32_avx512(BlockSource src_kind, const float* src, std::size_t ld, bf16_t* s0, bf16_t* s1,
                              bf16_t* s2);

// Each instruction set's table (kernels/isa/<set>/): the split and the gathers of one set.
const SplitKernels& split_kernels_portable();
const SplitKernels& split_kernels_avx2();  // the portable table with the FP64 split built for AVX2
const SplitKernels& split_kernels_avx512();
// The one the library uses: that of the process's instruction set (kernels/isa/isa.h).
const SplitKernels& split_kernels();

// max|A^(r)| -> sigma[r] = 0.75 * 2^(v(r) + rho); maxabs > 0 and finite.
double ozaki_sigma(double maxabs);
// v(r) back from sigma[r] > 0.
inline int ozaki_v(double sigma) { return std::ilogb(sigma) - (kOzakiRho - 1); }  // 1.5 * 2^(v+rho-1)
// Sets sc->norm[r] = 2^-v(r) for r < sc->active (v(r) >= kFp64MinSliceExp: exact).
void set_slice_norms(Fp64Scales* sc);
// The lowest slice exponent the packer keeps: a residual below 2^-1000 (relative to its row's
// or column's largest entry) ends the chain instead of becoming a slice, so that 2^-v stays a
// finite double. The truncation this leaves is far below every route's error (and counted by
// the certificate, fp64_certificate.h).
constexpr int kFp64MinSliceExp = -1000;

}  // namespace amxblas::kernels

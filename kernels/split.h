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

#include "kernels/bf16.h"
#include "kernels/gemm_types.h"

namespace amxblas::kernels {

constexpr int kOzakiRho = 53 - 8;  // rho = 45: significand gap between FP64 and BF16

// The per-slice Ozaki shifts of one matrix: sigma[r] = 0.75 * 2^(v(r) + rho) with
// v(r) = ceil(log2(max |A^(r)|)) over the whole matrix; slices r >= active are zero because
// the residual A^(active) is zero everywhere. The 0.75 (Ozaki's original extraction constant)
// keeps x + sigma in one binade for |x| <= 2^v whatever the sign of x, so every entry of slice r
// is on the 2^(v(r)-8) grid and v(r+1) <= v(r) - 9. With sigma = 2^(v+rho) instead, a
// positive x lands on 2^(v-7) and each slice keeps only 8 bits: about 2^-8 per diagonal, 5.7x-22x
// off Table 4, which this matches (tests/kernels/kernels_accuracy_test.cc).
struct Fp64Scales {
    int active = 0;
    double sigma[kFp64Slices] = {};
};

// max |A^(r)| over a run of values, A^(r) from A^(0) = x with sigma[0..r-1] (Eq. 14), and
// whether any input was Inf or NaN (the max alone would lose a NaN).
struct AbsMax {
    double value = 0;
    bool nonfinite = false;
};

enum class SliceStatus : int { ok = 0, subnormal = 1, overflow = 2 };

// Where a full 32x32 block of op(X) comes from, relative to the packed order (pack.h):
// a_n: op(A) = A, column-major, element (r, kk) at src[r + kk * ld] (a transpose);
// a_t: op(A) = A^T, element (r, kk) at src[kk + r * ld] (rows already contiguous);
// b_n: op(B) = B, element (kk, c) at src[kk + c * ld] (a transpose of K pairs);
// b_t: op(B) = B^T, element (kk, c) at src[c + kk * ld] (rows interleaved in pairs).
enum class BlockSource : int { a_n, a_t, b_n, b_t };

struct SplitKernels {
    // Eq. (8): s_r = bf16_rne(x^(r)), x^(r+1) = x^(r) - s_r in FP32, r = 0, 1, 2.
    void (*fp32)(const float* x, std::size_t n, bf16_t* s0, bf16_t* s1, bf16_t* s2);
    AbsMax (*fp64_absmax)(const double* x, std::size_t n, const Fp64Scales& sc, int r);
    // Eqs. (13)-(14): writes all six slices (zeros from sc.active on). Reports the worst
    // nonzero slice that is not a normal BF16 value; the slices are then unusable.
    SliceStatus (*fp64)(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[6]);
    // fp64, and also resid_max[t] := max(resid_max[t], max |x^(t)|) for t < sc.active: what
    // fp64_absmax(x, n, sc, t) computes, taken from the same residual chain (the packer
    // speculates on the scales and checks them with these; pack.cc).
    SliceStatus (*fp64_tracked)(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[6],
                                double resid_max[6]);
    // The packer's gather of one full block into a 1024-value tile in the packed order (A:
    // tile[r * 32 + kk]; B: tile[h * 512 + p * 32 + c * 2 + e] for K = 2p + e, column 16h + c).
    // Pure data movement; the instruction set only decides how it is done.
    void (*gather_fp32)(BlockSource src_kind, const float* src, std::size_t ld, float* tile);
    void (*gather_fp64)(BlockSource src_kind, const double* src, std::size_t ld, double* tile);
};

const SplitKernels& split_kernels_portable();
// The AVX-512 table when built (split_avx512.cc), else the portable one. Callers check the
// CPU first (cpu_has_avx512_split()).
const SplitKernels& split_kernels_avx512();
// The one the library uses: AVX-512 when the CPU and OS can run it, else portable.
const SplitKernels& split_kernels();

// max|A^(r)| -> sigma[r] = 0.75 * 2^(v(r) + rho); maxabs > 0 and finite.
double ozaki_sigma(double maxabs);
// v(r) back from sigma[r] > 0.
inline int ozaki_v(double sigma) { return std::ilogb(sigma) - (kOzakiRho - 1); }  // 1.5 * 2^(v+rho-1)

}  // namespace amxblas::kernels

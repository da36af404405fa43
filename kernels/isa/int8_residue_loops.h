// The INT8 engine's per-block loops (kernels/int8/int8_pack.cc, int8_gemm.cc's folds,
// crt_reconstruct.cc's sums), built once per instruction set
// of kernels/isa/isas.def from one source, kernels/int8/int8_residue_loops.inc: on AVX-512 they
// run eight doubles a vector instead of plain x86-64's two. Every build computes the same
// integers (exact FP64 arithmetic on integers below 2^53; tests/kernels/kernels_int8_residues_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/int8/crt_basis.h"

namespace amxblas::kernels::detail {

constexpr int kInt8BlockValues = 2048;  // one packed INT8 block (kAmxInt8Geometry: 32 x 64)

struct Int8ResidueLoops {
    // out[l][at + i] = round(v[i]) mod basis.m[l] in [-128, 127], i < kInt8BlockValues,
    // for |v[i]| < 2^92 (round: to nearest, ties to even; exact integers above 2^52).
    void (*residues)(const double* v, const CrtBasis& basis, std::int8_t* const* out, std::size_t at);
    // out[at + i] = min(127, floor(|v[i]|)), for |v[i]| <= 128.
    void (*digits)(const double* v, std::int8_t* out, std::size_t at);
    // dst (32 x 32, row stride ld) := (dst + sum) times mod m, or sum times mod m when first,
    // in [-(m-1)/2, (m-1)/2] ([-128, 127] for 256): a K chunk's INT32 sums (|sum| < 2^27)
    // folded into the residues the INT8 driver keeps (kernels/int8/int8_walk.h); times (below
    // 256) is 1, or on the last chunk the reconstruction's factor q_l (crt_reconstruct.h).
    void (*fold)(int m, const std::int32_t* sum, bool first, int times, std::int8_t* dst, int ld);
    // The sums of crt_to_double (kernels/int8/crt_reconstruct.cc) for entries e < count
    // (<= kCrtRow), from y_l at y[l * stride + e] (|y_l| <= 128): frac[e] = sum_l y_l fl(1/m_l),
    // and limb[j * kCrtRow + e] = sum_l y_l w_limb[l][j] for the basis's limbs j < basis.limbs,
    // each an integer below 2^53 (so exact, in any order).
    void (*crt_sums)(const CrtBasis& basis, const std::int8_t* y, std::size_t stride, int count, double* frac,
                     double* limb);
};

const Int8ResidueLoops& int8_residue_loops_portable();
const Int8ResidueLoops& int8_residue_loops_avx512();

}  // namespace amxblas::kernels::detail

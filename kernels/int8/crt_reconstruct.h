// From the residues of the INT8 GEMMs back to FP64: the integer P_ij = (Ā B̄)_ij, exactly, then
// rounded once to FP64 (docs/fp64-int8.md, Section 3).
//
// With y_l = (c_l q_l) mod m_l in [0, m_l) (c_l: anything congruent to P_ij mod m_l, q_l and
// the rest from crt_basis.h), the Chinese remainder theorem gives
//     P_ij = sum_l y_l (M / m_l) - k M,   k = sum_l y_l / m_l - P_ij / M.
// The engine keeps |P_ij| < 2^range_bits <= M / 4, so k is the integer nearest to
// sum_l y_l / m_l, which FP64 evaluates within 16 * 16 * 2^-53 of its value: k is exact. The sum is
// then formed modulo 2^128 (M < 2^128), where the result, below 2^125 in magnitude, is the
// two's complement of P_ij: no wider arithmetic is needed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/int8/crt_basis.h"

namespace amxblas::kernels {

// x rounded to nearest FP64, ties to even: one rounding, whatever the size of x.
double round_to_double(__int128 x);

// The exact P for one entry from its residues c[l * stride], l < b.count.
__int128 crt_value(const CrtBasis& b, const std::int32_t* c, std::size_t stride);

// out[e] = fl(P_e) for e < count, the residues of entry e at c[l * stride + e].
void crt_to_double(const CrtBasis& b, const std::int32_t* c, std::size_t stride, int count, double* out);

}  // namespace amxblas::kernels

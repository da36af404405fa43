// From the residues of the INT8 GEMMs back to FP64: the integer P_ij = (Ā B̄)_ij, exactly, then
// rounded once to FP64 (docs/fp64-int8.md, Section 3).
//
// With y_l = (c_l q_l) mod m_l in [0, m_l) (c_l: anything congruent to P_ij mod m_l, q_l and
// the rest from crt_basis.h), the Chinese remainder theorem gives
//     P_ij = sum_l y_l (M / m_l) - k M,   k = sum_l y_l / m_l - P_ij / M.
// The engine keeps |P_ij| < 2^range_bits <= M / 4, so k is the integer nearest to
// sum_l y_l / m_l, which FP64 evaluates within 24 * 24 * 2^-53 of its value: k is exact. The
// sum is then formed modulo 2^192 (wide_int.h; M < 2^185), where the result, below 2^182
// in magnitude, is the two's complement of P_ij.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/int8/crt_basis.h"

namespace amxblas::kernels {

// The exact P for one entry from its residues c[l * stride], l < b.count.
Wide crt_value(const CrtBasis& b, const std::int32_t* c, std::size_t stride);

}  // namespace amxblas::kernels

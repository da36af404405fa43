// From the residues of the INT8 GEMMs back to FP64: the integer P_ij = (Ā B̄)_ij, exactly, then
// rounded once to FP64 (docs/fp64-int8.md, Section 3).
//
// With y_l = (c_l q_l) mod m_l (c_l: anything congruent to P_ij mod m_l; q_l and the rest from
// crt_basis.h), the Chinese remainder theorem gives
//     P_ij = sum_l y_l (M / m_l) - k M,   k = sum_l y_l / m_l - P_ij / M.
// The engine keeps |P_ij| < 2^range_bits <= M / 4, so k is the integer nearest to
// sum_l y_l / m_l, which FP64 evaluates within 24 * 24 * 2^-53 of its value: k is exact.
//
// crt_value forms the sum modulo 2^192 (wide_int.h; M < 2^185), where the result, below 2^182
// in magnitude, is P's two's complement: the definition, for the tests. crt_to_double computes
// the same P for a row of entries with FP64 arithmetic that is exact and vectorizes: the y_l
// symmetric (|y_l| <= 128), M / m_l and M in the limbs of 40 bits M needs (two to five), each limb's sum
// sum_l y_l w_lj - k M_j an integer below 2^53, the carries moved up exactly; then the top three
// limbs and the sign of the rest round P once, as a correctly rounded sum of three FP64 terms
// (kernels/isa/int8_residue_loops.inc, built per instruction set; docs/fp64-int8.md, Section 3).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/int8/crt_basis.h"

namespace amxblas::kernels {

// The exact P for one entry from its residues c[l * stride], l < b.count.
Wide crt_value(const CrtBasis& b, const std::int32_t* c, std::size_t stride);

// out[e] = fl(P_e) for e < count (at most kCrtRow, crt_basis.h), from y_l = P_e q_l mod m_l of
// entry e at y[l * stride + e], symmetric: in [-(m_l - 1)/2, (m_l - 1)/2], [-128, 127] for 256
// (as the driver's last fold leaves them, kernels/int8/int8_walk.h); then, unless exponent is
// null, times_pow2(out[e], exponent[e]) (kernels/common/pow2.h), a zero +0: the operands'
// scalings undone.
void crt_to_double(const CrtBasis& b, const std::int8_t* y, std::size_t stride, int count, const int* exponent,
                   double* out);

}  // namespace amxblas::kernels

// The INT8 engine's split and pack (docs/fp64-int8.md, Section 1): each row o of op(A) (column
// of op(B)) is scaled by 2^s_o and rounded to the nearest integer, Ā = round(x 2^s_o), and its
// residues modulo each of the basis's moduli are packed as INT8 blocks of the micro-kernel
// geometry (kAmxInt8Geometry, microkernel.h), one buffer per modulus, zero padded past the
// edges. s_o = half - 1 - e_o - nu_o (int8_facts.h) keeps ||x 2^s_o||_2 <= 2^(half - 1), so
// ||Ā_o||_2 < 2^half when sqrt(K) < 2^half, and then |(Ā B̄)_ij| < 2^(half_A + half_B) by
// Cauchy-Schwarz: within the basis's range when half_A + half_B = range_bits. (Ā can reach
// 2^91 with 24 moduli: its residues are taken from its mantissa and exponent, never from a
// 64-bit copy of it above 2^62.)
//
// The magnitudes for the certificate's lower bound are packed the same way, one buffer:
// floor(|x| 2^(7 - e_o)), at most 127, so that 2^(e_o - 7) times it is at most |x|.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/int8/crt_basis.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// The exponent s_o of row (column) o under `half` bits (see above).
inline int int8_shift(const Int8OperandFacts& f, int o, int half) { return half - 1 - f.e[o] - f.nu[o]; }

// The split of a count: half_A + half_B = range_bits. False when sqrt(depth) reaches 2^(half - 1)
// for either (the count is too small for this K).
struct Int8Halves {
    int a = 0, b = 0;
};
bool int8_halves(const CrtBasis& basis, int depth, Int8Halves* out);

// Bytes of one layer (one modulus, or the magnitudes) of a chunk of `outer` rows (columns) and
// kc K values, padded to whole tiles and K steps.
inline std::size_t int8_layer_bytes(int outer, int kc) {
    return std::size_t(round_up(outer, kAmxInt8Geometry.mr)) * std::size_t(round_up(kc, kAmxInt8Geometry.kstep));
}

// Residues of rows (is_a) or columns o0 .. o0 + outer - 1 of op(X), K values k0 .. k0 + kc - 1,
// into out[l] (l < basis.count), each int8_layer_bytes(outer, kc) bytes.
void pack_int8_residues(bool is_a, const OperandView<double>& x, const Int8OperandFacts& f, int half,
                        const CrtBasis& basis, int o0, int outer, int k0, int kc, std::int8_t* const* out, int threads);

// The magnitude digits of the same chunk into out.
void pack_int8_magnitudes(bool is_a, const OperandView<double>& x, const Int8OperandFacts& f, int o0, int outer,
                          int k0, int kc, std::int8_t* out, int threads);

}  // namespace amxblas::kernels

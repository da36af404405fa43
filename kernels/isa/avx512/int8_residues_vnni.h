// The INT8 residues on AVX-512 VNNI (int8_residues_vnni.cc): built where the compiler takes
// -mavx512vnni (AMXBLAS_BUILT_AVX512_VNNI), run only where cpu_has_avx512_vnni(); the avx512
// build of the residue loops (int8_residues_avx512.cc) calls it for the bases it takes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/crt_basis.h"
#include "kernels/isa/int8_residue_loops.h"

namespace amxblas::kernels::detail {

// Whether every value a call of this basis packs is below 2^62 in magnitude (every count up to
// 16 moduli).
bool int8_residues_vnni_takes(const CrtBasis& basis);
// Int8ResidueLoops::residues for such a basis.
void int8_residues_vnni(const double* v, const CrtBasis& basis, std::int8_t* const* out, std::size_t at);

}  // namespace amxblas::kernels::detail

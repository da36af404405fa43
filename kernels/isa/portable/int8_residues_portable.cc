// The INT8 engine's block loops, portable build (kernels/isa/int8_residue_loops.h): two doubles
// a vector on plain x86-64.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/isa/int8_residue_loops.h"

namespace amxblas::kernels::detail {

#include "kernels/isa/int8_residue_loops.inc"
#include "kernels/isa/int8_certificate_row.inc"
#include "kernels/isa/int8_facts_loops.inc"

const Int8ResidueLoops& int8_residue_loops_portable() {
    static const Int8ResidueLoops loops{int8_residues, int8_digits, int8_fold, int8_crt_row, int8_row_counts,
                                             int8_extremes, int8_scaled_sums, int8_extremes_and_sums, nullptr, nullptr};
    return loops;
}

}  // namespace amxblas::kernels::detail

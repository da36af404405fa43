// The INT8 certificate's second look at the entries it fails (docs/fp64-int8.md, Section 4).
// Its lower bound L_ij of (|A||B|)_ij comes from 7-bit digits of each entry against its row's
// (column's) largest: an entry more than 2^7 below that largest has digit 0. Where a row's
// large entries meet a column's small ones, and the reverse, as in the wavefunctions of a DFT
// code (rows spread over 2^20), L_ij is far below (|A||B|)_ij and entries the bound would pass
// fail at every count. Those entries are counted again against a lower bound of (|A||B|)_ij
// summed in FP64 (Int8BlockCertificate::retest), before the count is picked: K multiply-adds
// each, what a repair of the entry would cost.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/int8/int8_facts.h"

namespace amxblas::kernels {

// A lower bound of (|op(A)||op(B)|)_ij in units of 2^(e_i + f_j) (fa.e, fb.e): the FP64 sum of
// the scaled |a_il||b_lj| in index order, less its rounding.
double magnitude_lower_bound(const OperandView<double>& a, const OperandView<double>& b, const Int8OperandFacts& fa,
                             const Int8OperandFacts& fb, int i, int j);

// magnitude_lower_bound of each entry at[q] (i + j m, m = fa.outer), on the pool's threads.
std::vector<double> magnitude_lower_bounds(const OperandView<double>& a, const OperandView<double>& b,
                                           const Int8OperandFacts& fa, const Int8OperandFacts& fb,
                                           const std::vector<std::size_t>& at, int threads);

}  // namespace amxblas::kernels

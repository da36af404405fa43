// The INT8 engine's one read of each operand before it splits anything: per row of op(A)
// (column of op(B)), what the scaling and the certificate need (docs/fp64-int8.md, Sections 1
// and 4). Kept as vectors, O(M + N), never as matrices.
#pragma once

#include <vector>

#include "kernels/pack/pack.h"

namespace amxblas::kernels {

struct Int8OperandFacts {
    int outer = 0;  // rows of op(A) or columns of op(B)
    int depth = 0;  // K (of the real GEMM: 2K for complex views)
    // Per row (column) o, with x = the row's entries and max |x| <= 2^e[o] (e = ceil(log2 max)):
    std::vector<int> e;        // 0 for a zero row
    std::vector<int> nu;       // ceil(log2 of an upper bound of ||x 2^-e||_2), >= 0; 0 for a zero row
    std::vector<double> n1;    // an upper bound of ||x 2^-e||_1
    std::vector<int> lsb;      // the least exponent of a set bit of any nonzero x (x 2^s is an
                               // integer for every entry iff s + lsb >= 0); kLsbNone for a zero row
    std::vector<unsigned char> zero;
    bool any_nonzero = false;
};

constexpr int kLsbNone = 1 << 20;

// Whether a row's sums of |x| and x^2 taken unscaled (Int8ResidueLoops::extremes_and_sums), times
// 2^-e and twice 2^-e, are the sums of |x| 2^-e and its squares to the bit: mx and least are the
// row's largest and least nonzero |x|, e its exponent (int8_facts.cc says why).
bool int8_unscaled_sums_exact(double mx, double least, int e);

// Reads op(X) once by rows (as_rows: op(A)) or columns (op(B)). nullptr, or "domain:nonfinite"
// when an entry is Inf or NaN.
const char* int8_operand_facts(const OperandView<double>& x, bool as_rows, int threads, Int8OperandFacts* out);

}  // namespace amxblas::kernels

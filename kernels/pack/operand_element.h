// One value of an operand view (pack.h), wherever it is stored: for the portable packer
// (pack_generic.cc) and the INT8 engine's element-wise passes (kernels/int8/).
#pragma once

#include <cstddef>

#include "kernels/pack/pack.h"

namespace amxblas::kernels {

// op(X')(row, col) of a view (pack.h, Interleave): op(X) itself for a real view; for complex
// ones the parts of the stored complex entry, the imaginary one negated for 'C' (the BF16
// split is odd, so negating first gives the negated slices; the INT8 engine's rounding is odd
// too).
// Inlined wherever it is used (per value, in loops): as a call it was 6% of a ZGEMM on the INT8
// engine.
template <typename T>
[[gnu::always_inline]] inline T element(const OperandView<T>& v, int row, int col) {
    if (v.kind == Interleave::real)
        return v.trans == 'N' ? v.x[row + std::size_t(col) * v.ld] : v.x[col + std::size_t(row) * v.ld];
    // complex_a: A'(i, 2l + e) = (Re, Im)[e] of op(A)(i, l);
    // complex_b: B'(2l + e, 2j + f) = [[Re, Im], [-Im, Re]][e][f] of op(B)(l, j).
    const bool is_a = v.kind == Interleave::complex_a;
    const int r = is_a ? row : row / 2, c = col / 2;
    const std::size_t at = v.trans == 'N' ? r + std::size_t(c) * v.ld : c + std::size_t(r) * v.ld;
    const T re = v.x[2 * at], im = v.trans == 'C' ? -v.x[2 * at + 1] : v.x[2 * at + 1];
    if (is_a) return col % 2 == 0 ? re : im;
    const int e = row % 2, f = col % 2;
    return e == f ? re : (e == 0 ? im : -im);
}

}  // namespace amxblas::kernels

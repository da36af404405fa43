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

// A row of A' (complex_a) or a column of B' (complex_b) of a complex view, for loops along it:
// its value l is element()'s, read from the stored entry at entry + 2 (l / 2) step.
template <typename T>
struct ComplexLine {
    const T* entry;     // the line's first stored entry
    std::size_t step;   // stored entries from one K index to the next
    int flip;           // B' column 2j + 1 takes the parts the other way round
    bool is_a;
    T conj;             // -1 for 'C': the imaginary part negated
    // The part (0: real, 1: imaginary) value l is made of.
    int part(int l) const { return (l & 1) ^ flip; }
    T stored(int l) const { return entry[2 * (std::size_t(l >> 1) * step) + part(l)]; }
    // element(): the imaginary part times conj, and B'(2l + 1, 2j) = -Im.
    T value(int l) const {
        const T v = part(l) == 1 ? stored(l) * conj : stored(l);
        return !is_a && (l & 1) == 1 && flip == 0 ? -v : v;
    }
};

// Row o of A' (v.kind == complex_a) or column o of B' (complex_b).
template <typename T>
ComplexLine<T> complex_line(const OperandView<T>& v, int o) {
    const bool is_a = v.kind == Interleave::complex_a;
    const int idx = is_a ? o : o / 2;  // op(A)'s row or op(B)'s column
    // op(A)(idx, k) or op(B)(k, idx): consecutive K indices are adjacent where op(X) = X^T
    // (A) or X (B), else ld apart.
    const bool k_contiguous = is_a ? v.trans != 'N' : v.trans == 'N';
    const std::size_t ld = std::size_t(v.ld);
    return {v.x + 2 * (k_contiguous ? std::size_t(idx) * ld : std::size_t(idx)), k_contiguous ? 1 : ld,
            is_a ? 0 : o % 2, is_a, v.trans == 'C' ? T(-1) : T(1)};
}

}  // namespace amxblas::kernels

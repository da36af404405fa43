#include "kernels/certificate/fp64_structural_zeros.h"

#include <algorithm>

namespace amxblas::kernels {
namespace {

bool transposed(char t) { return !is_no_trans(t); }

template <typename T>
bool nonzero(const T& x) {
    return x != T(0);  // a complex number is zero when both parts are (the conjugate's sign is no matter)
}

}  // namespace

template <typename T>
StructuralZeros<T>::StructuralZeros(const GemmArgs<T>& g)
    : g_(g),
      budget_(std::int64_t(g.m) * g.k + std::int64_t(g.k) * g.n + std::int64_t(g.m) * g.n) {}

// Each operand is read in storage order (down its columns), whichever way op() turns it.
template <typename T>
void StructuralZeros<T>::find_spans() {
    const int m = g_.m, n = g_.n, k = g_.k;
    a_rows_.assign(std::size_t(m), Span{k, -1});
    b_cols_.assign(std::size_t(n), Span{k, -1});
    const auto note = [](Span& s, int l) {
        if (s.first > l) s.first = l;
        if (s.last < l) s.last = l;
    };
    // Stored A is m x k (N) or k x m (T, C); stored B is k x n (N) or n x k (T, C).
    const bool ta = transposed(g_.transa), tb = transposed(g_.transb);
    for (int col = 0; col < (ta ? m : k); ++col) {
        const T* x = g_.a + std::int64_t(col) * g_.lda;
        for (int row = 0; row < (ta ? k : m); ++row)
            if (nonzero(x[row])) ta ? note(a_rows_[col], row) : note(a_rows_[row], col);
    }
    for (int col = 0; col < (tb ? k : n); ++col) {
        const T* x = g_.b + std::int64_t(col) * g_.ldb;
        for (int row = 0; row < (tb ? n : k); ++row)
            if (nonzero(x[row])) tb ? note(b_cols_[row], col) : note(b_cols_[col], row);
    }
}

template <typename T>
bool StructuralZeros<T>::spans_apart(int i, int j) {
    std::call_once(spans_found_, [this] { find_spans(); });
    const Span a = a_rows_[std::size_t(i)], b = b_cols_[std::size_t(j)];
    // An empty span has first > last, so it meets nothing.
    return a.last < b.first || b.last < a.first;
}

template <typename T>
bool StructuralZeros<T>::terms_zero(int i, int j) {
    std::call_once(spans_found_, [this] { find_spans(); });
    const Span a = a_rows_[std::size_t(i)], b = b_cols_[std::size_t(j)];
    // Only the terms where both spans overlap can have two nonzero factors: those are read, and
    // charged.
    const int lo = std::max(a.first, b.first), hi = std::min(a.last, b.last);
    if (lo > hi) return true;  // the spans do not meet
    if (budget_ < hi - lo + 1) return false;
    budget_ -= hi - lo + 1;
    // op(A)(i, l) = a[i + l * lda] (N) or a[l + i * lda] (T, C): a stride per l and an origin.
    const std::int64_t a_step = transposed(g_.transa) ? 1 : g_.lda;
    const std::int64_t b_step = transposed(g_.transb) ? g_.ldb : 1;
    const T* ap = g_.a + (transposed(g_.transa) ? std::int64_t(i) * g_.lda : i);
    const T* bp = g_.b + (transposed(g_.transb) ? j : std::int64_t(j) * g_.ldb);
    for (int l = lo; l <= hi; ++l)
        if (nonzero(ap[l * a_step]) && nonzero(bp[l * b_step])) return false;
    return true;
}

template class StructuralZeros<double>;
template class StructuralZeros<std::complex<double>>;

}  // namespace amxblas::kernels

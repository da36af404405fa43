#include "policy/fp64_structural_zeros.h"

namespace amxblas {
namespace {

bool transposed(char t) { return t != 'N' && t != 'n'; }

template <typename T>
bool nonzero(const T& x) {
    return x != T(0);  // a complex number is zero when both parts are (the conjugate's sign is no matter)
}

}  // namespace

template <typename T>
StructuralZeros<T>::StructuralZeros(const kernels::GemmArgs<T>& g)
    : g_(g),
      budget_(std::int64_t(g.m) * g.k + std::int64_t(g.k) * g.n + std::int64_t(g.m) * g.n) {}

template <typename T>
bool StructuralZeros<T>::operator()(int i, int j) {
    if (budget_ < g_.k) return false;
    budget_ -= g_.k;
    // op(A)(i, l) = a[i + l * lda] (N) or a[l + i * lda] (T, C): a stride per l and an origin.
    const std::int64_t a_step = transposed(g_.transa) ? 1 : g_.lda;
    const std::int64_t b_step = transposed(g_.transb) ? g_.ldb : 1;
    const T* a = g_.a + (transposed(g_.transa) ? std::int64_t(i) * g_.lda : i);
    const T* b = g_.b + (transposed(g_.transb) ? j : std::int64_t(j) * g_.ldb);
    for (int l = 0; l < g_.k; ++l)
        if (nonzero(a[l * a_step]) && nonzero(b[l * b_step])) return false;
    return true;
}

template class StructuralZeros<double>;
template class StructuralZeros<std::complex<double>>;

}  // namespace amxblas

// C := BETA*C for a call with K = 0 or ALPHA = 0, as the reference BLAS (xgemm.f) does it:
// BETA = 1 leaves C as it is, BETA = 0 overwrites C with zeros without reading it, and A and
// B are never read. A complex product is the Fortran one, (a+bi)(c+di) = (ac-bd) + (ad+bc)i,
// without C's Annex G rescue of NaN results.
#pragma once

#include <complex>

#include "kernels/driver/emulated_gemm.h"

namespace amxblas {

template <typename T>
inline T fortran_mul(T x, T y) {
    return x * y;
}
template <typename R>
inline std::complex<R> fortran_mul(std::complex<R> x, std::complex<R> y) {
    return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

template <typename T>
void beta_scale(const kernels::GemmArgs<T>& a) {
    if (a.beta == T(1)) return;
    for (int j = 0; j < a.n; ++j) {
        T* col = a.c + static_cast<long>(j) * a.ldc;
        if (a.beta == T(0))
            for (int i = 0; i < a.m; ++i) col[i] = T(0);
        else
            for (int i = 0; i < a.m; ++i) col[i] = fortran_mul(a.beta, col[i]);
    }
}

}  // namespace amxblas

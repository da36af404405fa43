// The product of two numbers as the reference BLAS's Fortran forms it: for complex ones
// (a+bi)(c+di) = (ac-bd) + (ad+bc)i, without C's Annex G rescue of NaN results, so that C gets
// the bits the reference BLAS would give it. Every layer that scales or repairs C uses it.
#pragma once

#include <complex>

namespace amxblas::kernels {

template <typename T>
inline T fortran_mul(T x, T y) {
    return x * y;
}
template <typename R>
inline std::complex<R> fortran_mul(std::complex<R> x, std::complex<R> y) {
    return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

}  // namespace amxblas::kernels

// The flags a routed call leaves for its caller (docs/semantics.md, "The floating-point
// environment"): the caller's own, as they were, plus what a native GEMM raises for the same
// result, and only that: overflow where C now holds an Inf, invalid where it holds a NaN. A
// native GEMM also raises inexact (almost always) and underflow (on tiny results); the library
// raises neither: its own arithmetic is not the caller's.
//
// The kernels raise overflow or invalid only in their last step, alpha * AB + beta * C, on finite
// in-domain inputs (tests/kernels/driver/kernels_fenv_test.cc checks the rest raises neither), so C is
// read again only when the library's arithmetic raised one of them. The flag is raised by an
// operation that raises it, in the caller's environment: a caller who unmasked it gets the
// SIGFPE the real BLAS would have given, at the end of the call instead of inside it, when the
// library holds nothing of the call any more.
#pragma once

#include <cfloat>
#include <cmath>
#include <complex>

#include "kernels/common/fp_environment.h"
#include "kernels/common/gemm_types.h"

namespace amxblas {

namespace detail {

inline double real_part(double x) { return x; }
inline double real_part(float x) { return x; }
template <typename R>
double real_part(std::complex<R> x) { return x.real(); }
inline double imag_part(double) { return 0; }
inline double imag_part(float) { return 0; }
template <typename R>
double imag_part(std::complex<R> x) { return x.imag(); }

// Operations that raise the flag (and trap where the caller unmasked it); volatile, so that
// the compiler neither folds nor drops them.
inline void raise_overflow() {
    volatile double big = DBL_MAX;
    big = big * 2;
}
inline void raise_invalid() {
    volatile double zero = 0;
    zero = zero / zero;
}

}  // namespace detail

// The flags to raise for the result in C: `raised` is what the library's environment scope
// raised(); run inside that scope (C's values are only classified, but a caller's trap must not
// fire on a signalling NaN it left in C).
template <typename T>
unsigned result_flags(const kernels::GemmArgs<T>& a, unsigned raised) {
    namespace mx = kernels::mxcsr;
    if (!(raised & (mx::kOverflow | mx::kInvalid))) return 0;
    bool inf = false, nan = false;
    for (int j = 0; j < a.n; ++j) {
        const T* col = a.c + static_cast<long>(j) * a.ldc;
        for (int i = 0; i < a.m; ++i)
            for (const double v : {detail::real_part(col[i]), detail::imag_part(col[i])}) {
                inf |= std::isinf(v);
                nan |= std::isnan(v);
            }
    }
    return (inf ? raised & mx::kOverflow : 0) | (nan ? raised & mx::kInvalid : 0);
}

// In the caller's environment, once the call has left the library (its threads given back, its
// line logged, its re-entry guard released: shim/gemm_dispatch.h): raises those flags.
inline void raise_in_caller_environment(unsigned flags) {
    if (flags & kernels::mxcsr::kOverflow) detail::raise_overflow();
    if (flags & kernels::mxcsr::kInvalid) detail::raise_invalid();
}

}  // namespace amxblas

// C := BETA*C for a call with K = 0 or ALPHA = 0, as the reference BLAS (xgemm.f) does it:
// BETA = 1 leaves C as it is, BETA = 0 overwrites C with zeros without reading it, and A and
// B are never read. A complex product is the Fortran one (kernels/common/fortran_complex.h).
#pragma once

#include <complex>

#include "kernels/common/fortran_complex.h"
#include "kernels/common/gemm_types.h"

namespace amxblas {

template <typename T>
void beta_scale(const kernels::GemmArgs<T>& a) {
    if (a.beta == T(1)) return;
    for (int j = 0; j < a.n; ++j) {
        T* col = a.c + static_cast<long>(j) * a.ldc;
        if (a.beta == T(0))
            for (int i = 0; i < a.m; ++i) col[i] = T(0);
        else
            for (int i = 0; i < a.m; ++i) col[i] = kernels::fortran_mul(a.beta, col[i]);
    }
}

}  // namespace amxblas

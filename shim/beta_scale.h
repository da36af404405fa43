// C := BETA*C for a call with K = 0 or ALPHA = 0, as the reference BLAS (dgemm.f) does it:
// BETA = 1 leaves C as it is, BETA = 0 overwrites C with zeros without reading it, and A and
// B are never read.
#pragma once

#include "kernels/emulated_gemm.h"

namespace amxblas {

template <typename T>
void beta_scale(const kernels::GemmArgs<T>& a) {
    if (a.beta == T(1)) return;
    for (int j = 0; j < a.n; ++j) {
        T* col = a.c + static_cast<long>(j) * a.ldc;
        if (a.beta == T(0))
            for (int i = 0; i < a.m; ++i) col[i] = T(0);
        else
            for (int i = 0; i < a.m; ++i) col[i] *= a.beta;
    }
}

}  // namespace amxblas

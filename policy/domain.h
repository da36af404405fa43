// Numeric-domain scans: can the BF16 component-product method represent this call's inputs?
// Each returns nullptr when the inputs are in the domain, else the forward reason
// ("domain:nonfinite", ...). They read op(A) and op(B) once and never write.
#pragma once

#include "kernels/emulated_gemm.h"

namespace amxblas {

const char* check_sgemm_domain(const kernels::GemmArgs<float>& args);
const char* check_dgemm_domain(const kernels::GemmArgs<double>& args, int products);

}  // namespace amxblas

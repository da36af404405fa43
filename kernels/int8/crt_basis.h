// The INT8 engine's CRT bases (kernels/common/crt_basis.h), one per count of moduli, built when
// the library loads.
#pragma once

#include "kernels/common/crt_basis.h"

namespace amxblas::kernels {

// The basis of the first `count` moduli, count in [kInt8MinModuli, kInt8MaxModuli]; built when
// the library loads (no function-local static: fork safety, kernels/driver/process_state.h).
const CrtBasis& crt_basis(int count);

}  // namespace amxblas::kernels

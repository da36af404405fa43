// The real BLAS behind us: each routine is resolved once, thread-safely, on its first call.
// Order: dlsym(RTLD_NEXT) (the program's own BLAS); else a BLAS already loaded outside the
// global scope (numpy's, opened RTLD_LOCAL); else the library named by
// AMXBLAS_FALLBACK (an error if it cannot be loaded: no silent second choice); else
// libopenblas.so.0, else libblas.so.3. Never our own symbol. When nothing provides the
// routine, one message names it and the variable to set, and the process exits non-zero:
// returning with C untouched would silently corrupt the user's results.
#pragma once

#include "shim/blas_abi.h"

namespace amxblas {

void* real_symbol(Routine r);

template <typename Fn>
Fn* real(Routine r) {
    return reinterpret_cast<Fn*>(real_symbol(r));
}

}  // namespace amxblas

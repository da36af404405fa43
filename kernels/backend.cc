// Backend names, "was it built?", "can it run here?", and the micro-kernel table per backend.
#include "kernels/backend.h"
#include "kernels/cpu_features.h"
#include "kernels/emulated_gemm.h"

namespace amxblas::kernels {

const char* backend_name(Backend b) {
    switch (b) {
        case Backend::reference: return "reference";
        case Backend::avx512: return "avx512";
        case Backend::amx: return "amx";
    }
    return "unknown";
}

bool backend_built(Backend b) {
    switch (b) {
        case Backend::reference: return true;
        case Backend::avx512: return AMXBLAS_BUILT_AVX512 != 0;
        case Backend::amx: return AMXBLAS_BUILT_AMX != 0;
    }
    return false;
}

bool backend_runnable_on_cpu(Backend b) {
    switch (b) {
        case Backend::reference: return true;
        case Backend::avx512: return cpu_has_avx512_bf16();
        case Backend::amx: return cpu_has_amx_bf16();
    }
    return false;
}

bool backend_usable(Backend b, bool amx_emulator) {
    if (!backend_built(b)) return false;
    if (b == Backend::amx) return backend_runnable_on_cpu(b) || amx_emulator;
    return backend_runnable_on_cpu(b);
}

MicroKernels microkernels_for(Backend b) {
#if AMXBLAS_BUILT_AVX512
    if (b == Backend::avx512) return avx512_microkernels();
#endif
#if AMXBLAS_BUILT_AMX
    if (b == Backend::amx) return amx_microkernels();
#endif
    (void)b;
    return reference_microkernels();
}

}  // namespace amxblas::kernels

// Backend names, "was it built?", "can it run here?", and the micro-kernel table per backend.
#include "kernels/isa/backend.h"

#include <cstring>

#include "kernels/runtime/cpu_features.h"

namespace amxblas::kernels {

const char* backend_name(Backend b) {
    switch (b) {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) \
    case Backend::id: return #id;
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    }
    return "unknown";
}

bool parse_backend(const char* name, Backend* out) {
    for (Backend b : kAllBackends)
        if (std::strcmp(name, backend_name(b)) == 0) {
            *out = b;
            return true;
        }
    return false;
}

bool backend_built(Backend b) {
    switch (b) {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) \
    case Backend::id: return (built) != 0;
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    }
    return false;
}

bool backend_runnable_on_cpu(Backend b) {
    switch (b) {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) \
    case Backend::id: return detector();
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    }
    return false;
}

bool backend_usable(Backend b, bool amx_emulator) {
    if (!backend_built(b)) return false;
    if (b == Backend::amx) return backend_runnable_on_cpu(b) || amx_emulator;
    return backend_runnable_on_cpu(b);
}

// A backend that was not built has no table to name: `if constexpr` keeps its function out of
// the program ([basic.def.odr]: not odr-used in a discarded statement).
MicroKernels microkernels_for(Backend b) {
    MicroKernels k = reference_microkernels();
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) \
    if constexpr ((built) != 0) {                                       \
        if (b == Backend::id) k = microkernels();                      \
    }
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    if (!k.product_s8) {
        k.int8_geometry = kAmxInt8Geometry;
        k.product_s8 = reference_product_s8;
    }
    return k;
}

}  // namespace amxblas::kernels

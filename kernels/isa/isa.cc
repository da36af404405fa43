// The dispatch of kernels/isa/isas.def: everything here is generated from its rows.
#include "kernels/isa/isa.h"

#include "kernels/runtime/cpu_features.h"

namespace amxblas::kernels {

const char* isa_name(Isa isa) {
    switch (isa) {
#define AMXBLAS_ISA(id, detector) \
    case Isa::id: return #id;
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
    }
    return "unknown";
}

bool isa_runs(Isa isa) {
    switch (isa) {
#define AMXBLAS_ISA(id, detector) \
    case Isa::id: return detector();
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
    }
    return false;
}

Isa isa_here() {
    static const Isa here = [] {
#define AMXBLAS_ISA(id, detector) \
    if (detector()) return Isa::id;
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
        return Isa::portable;
    }();
    return here;
}

const IsaKernels& isa_kernels(Isa isa) {
    switch (isa) {
#define AMXBLAS_ISA(id, detector) \
    case Isa::id: return isa_kernels_##id();
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
    }
    return isa_kernels_portable();
}

// The subsystems' accessors (split.h, reconstruct.h): the process's row.
const SplitKernels& split_kernels() { return *isa_kernels().split; }
const ReconstructKernels& reconstruct_kernels() { return *isa_kernels().reconstruct; }

}  // namespace amxblas::kernels

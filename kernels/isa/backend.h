// The backends of kernels/common/backends.def: their names, whether each was built and can run
// here, and which micro-kernel table a call uses.
#pragma once

#include "kernels/common/gemm_types.h"
#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {

const char* backend_name(Backend b);  // "amx", "avx512", "reference": kernels/common/backends.def
// The backend named `name` (a row of kernels/common/backends.def); false when there is none.
bool parse_backend(const char* name, Backend* out);

// "Was this path built?" and "can it run on this machine?" are separate questions.
bool backend_built(Backend b);
// reference: always; avx512: CPU has AVX512F+BW+BF16 and the OS saves ZMM state;
// amx: CPUID AMX-TILE/AMX-BF16/AMX-INT8, palette 1 in leaf 0x1D and arch_prctl(ARCH_REQ_XCOMP_PERM)
// succeeds. Computed once, cached, thread-safe.
bool backend_runnable_on_cpu(Backend b);


// Built, and either runnable on this CPU or (amx only) served by the AMX trap-and-emulate
// harness, which the caller says is loaded (RunOptions::amx_emulator).
bool backend_usable(Backend b, bool amx_emulator);
// The table for a backend: the reference entries, overridden by the backend's own.
MicroKernels microkernels_for(Backend b);

}  // namespace amxblas::kernels

// Internal: which micro-kernel table a call uses.
#pragma once

#include "kernels/emulated_gemm.h"
#include "kernels/microkernel.h"

namespace amxblas::kernels {

// Built, and either runnable on this CPU or (amx only) served by the AMX trap-and-emulate
// harness, which the caller says is loaded (RunOptions::amx_emulator).
bool backend_usable(Backend b, bool amx_emulator);
// The table for a backend: the reference entries, overridden by the backend's own.
MicroKernels microkernels_for(Backend b);

}  // namespace amxblas::kernels

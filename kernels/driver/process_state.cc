// Each call below returns a function-local static: calling it once here initialises it.
#include "kernels/driver/process_state.h"

#include "kernels/isa/isa.h"
#include "kernels/pack/pack.h"
#include "kernels/runtime/cpu_features.h"
#include "kernels/runtime/thread_pool.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {

void settle_process_state() {
    (void)cpu_has_avx2();
    (void)cpu_has_avx512_split();
    (void)cpu_has_avx512_bf16();
    (void)cpu_has_avx512_vnni();
    (void)cpu_has_amx_bf16();
    (void)isa_here();
    // Every row's tables, not only the process's: one set's code may call another's (the
    // AVX-512 split hands its tails to the portable one).
#define AMXBLAS_ISA(id, detector) (void)isa_kernels_##id();
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
    (void)streaming_threshold_bytes();
    start_workspace_pool();
    start_thread_pool();
}

}  // namespace amxblas::kernels

// Each call below returns a function-local static: calling it once here initialises it.
#include "kernels/runtime/process_state.h"

#include "kernels/certificate/fp64_certificate_loops.h"
#include "kernels/runtime/cpu_features.h"
#include "kernels/scan/operand_scan.h"
#include "kernels/pack/pack.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/isa/split.h"
#include "kernels/runtime/thread_pool.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {

void settle_process_state() {
    (void)cpu_has_avx512_split();
    (void)cpu_has_avx512_bf16();
    (void)split_kernels();
    (void)reconstruct_kernels();
    (void)streaming_threshold_bytes();
    (void)scan_avx512_available();
    (void)detail::cert_loops();
    start_workspace_pool();
    start_thread_pool();
}

}  // namespace amxblas::kernels

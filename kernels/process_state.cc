// Each call below returns a function-local static: calling it once here initialises it.
#include "kernels/process_state.h"

#include "kernels/cpu_features.h"
#include "kernels/pack.h"
#include "kernels/reconstruct.h"
#include "kernels/split.h"
#include "kernels/thread_pool.h"
#include "kernels/workspace.h"

namespace amxblas::kernels {

void settle_process_state() {
    (void)cpu_has_avx512_split();
    (void)cpu_has_avx512_bf16();
    (void)split_kernels();
    (void)reconstruct_kernels();
    (void)streaming_threshold_bytes();
    start_workspace_pool();
    start_thread_pool();
}

}  // namespace amxblas::kernels

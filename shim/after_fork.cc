// What fork() needs from the library (pthread_atfork, registered when the library is loaded).
//
// Before: no lazy initialisation may be in progress. A function-local static is initialised
// under a guard fork() knows nothing about; a child forked while another thread is inside one
// inherits it "in progress", with no thread to finish it, and hangs on its first call
// (kernels/driver/process_state.h). So the load-time constructor initialises the kernels'
// process-wide state at once, and the prepare handler finishes the settings and the
// hardware facts (which depend on the environment, so they are read at the first call, or
// at the first fork if that comes first): if another thread is initialising them, the
// forking thread waits for it. It also waits for a question to the dynamic loader in progress
// in another thread (shim/openmp.h), so the child never inherits the loader's state half done.
//
// After, in the child: only the thread that called fork() exists in the child, so the calls
// the parent's other threads had in flight are not the child's: it starts with no routed call
// running, its own summary counts, fresh log locks and its own AMXBLAS_RECORD_MAX_MB allowance.
// The kernels' thread pool has its own child handler (kernels/runtime/thread_pool.cc). The
// parent is untouched.
#include <pthread.h>

#include "kernels/driver/process_state.h"
#include "shim/config.h"
#include "shim/gemm_dispatch.h"
#include "shim/log.h"
#include "shim/openmp.h"
#include "shim/record.h"

namespace amxblas {
namespace {

void settle_before_fork() {
    (void)settings();
    openmp_lookup_before_fork();
}

void release_in_parent() { openmp_lookup_after_fork(); }

void reset_in_child() {
    openmp_lookup_after_fork();
    g_routed_calls_running.store(0, std::memory_order_relaxed);
    g_routed_threads_in_use.store(0, std::memory_order_relaxed);
    log_after_fork();
    record_after_fork();
}

__attribute__((constructor)) void register_fork_handler() {
    kernels::settle_process_state();
    pthread_atfork(settle_before_fork, release_in_parent, reset_in_child);
}

}  // namespace
}  // namespace amxblas

// What a forked child resets (pthread_atfork, registered when the library is loaded). Only the
// thread that called fork() exists in the child, so the calls the parent's other threads had in
// flight are not the child's: it starts with no routed call running, its own summary counts
// and fresh log locks. The kernels' thread pool has its own child handler
// (kernels/thread_pool.cc). The parent is untouched.
#include <pthread.h>

#include "shim/gemm_dispatch.h"
#include "shim/log.h"

namespace amxblas {
namespace {

void reset_in_child() {
    g_routed_calls_running.store(0, std::memory_order_relaxed);
    g_routed_threads_in_use.store(0, std::memory_order_relaxed);
    log_after_fork();
}

__attribute__((constructor)) void register_fork_handler() { pthread_atfork(nullptr, nullptr, reset_in_child); }

}  // namespace
}  // namespace amxblas

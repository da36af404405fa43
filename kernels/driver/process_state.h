// The kernels' process-wide state, initialised all at once when the library is loaded.
//
// Why: a function-local static is initialised under a guard (__cxa_guard_acquire) that fork()
// knows nothing about. When one thread forks while another is inside such an initialisation
// (the first routed call of a process runs several), the child inherits the guard "in
// progress" with no thread left to finish it, and its first routed call waits forever.
// Measured before this existed: 4 of 300 forks made 0 to 3 ms into a process's first routed
// SGEMM left the child hung on the workspace pool's guard; tests/shim/fork_first_call.c
// sweeps that window.
// The library's load-time constructor (shim/after_fork.cc) calls this before the program can
// have threads of its own, so none of these guards can be in progress at a later fork.
#pragma once

namespace amxblas::kernels {

// Runs every lazy initialisation of the kernels' routed path: the CPU feature tests, the
// split and reconstruction kernel tables, the streaming-store threshold, the workspace pool
// and the thread pool's fork handler. Idempotent and cheap (no allocation beyond the pool's
// bookkeeping, no thread started).
void settle_process_state();

}  // namespace amxblas::kernels

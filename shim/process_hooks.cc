// The C library functions the library takes over besides the GEMMs, so that the summary covers
// every way a process ends and stays invisible to the program's signal handling:
//   _exit, _Exit     the summary, then the C library's _exit
//   sigaction, signal  the program's view of SIGTERM, SIGINT and SIGHUP (shim/summary_signals.cc)
//
// _exit: Open MPI's MPI_Abort (4.1: ompi_mpi_abort -> ompi_rte_abort -> the ess component's
// abort, which calls _exit), a signal handler of the program's that calls _exit, Python's
// os._exit: none of them runs atexit, and no signal is involved. Hooking MPI_Abort itself would
// miss MPI's errors-are-fatal path (which calls ompi_mpi_abort inside libmpi, never through the
// exported name) and every other MPI and runtime; every one of them reaches _exit through its
// PLT, where the preloaded definition wins. The summary is written only by the process that
// counted the calls (not by a vfork() child, which shares its memory and calls _exit after a
// failed exec), and it is async-signal-safe, as _exit must be. Then the C library's _exit,
// found at load time, or the exit_group system call it makes.
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/log.h"
#include "shim/summary_signals.h"

namespace amxblas {
namespace {

using ExitFn = void(int);
using SignalFn = sighandler_t(int, sighandler_t);
ExitFn* g_real_exit = nullptr;
SignalFn* g_real_signal = nullptr;

__attribute__((constructor)) void resolve_process_functions() {
    g_real_exit = reinterpret_cast<ExitFn*>(dlsym(RTLD_NEXT, "_exit"));
    g_real_signal = reinterpret_cast<SignalFn*>(dlsym(RTLD_NEXT, "signal"));
}

[[noreturn]] void end_process(int status) {
    write_summary_now();
    if (g_real_exit) g_real_exit(status);
    for (;;) syscall(SYS_exit_group, status);
}

}  // namespace
}  // namespace amxblas

extern "C" {

__attribute__((visibility("default"), noreturn)) void _exit(int status) { amxblas::end_process(status); }

__attribute__((visibility("default"), noreturn)) void _Exit(int status) noexcept { amxblas::end_process(status); }

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                     struct sigaction* old) noexcept {
    return amxblas::program_sigaction(sig, act, old);
}

// glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler).
__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) noexcept {
    if (!amxblas::summary_signal_watched(sig) || handler == SIG_ERR) {
        if (amxblas::g_real_signal) return amxblas::g_real_signal(sig, handler);
    }
    struct sigaction act = {}, old = {};
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (amxblas::program_sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

}  // extern "C"

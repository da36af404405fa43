#include "shim/summary_signals.h"

#include <dlfcn.h>
#include <signal.h>

#include <atomic>
#include <cerrno>


namespace amxblas {

namespace {

// SIGTERM (batch systems, mpirun cleaning up after MPI_Abort), SIGINT and SIGHUP end most
// programs without exit(), so atexit never runs. The library never replaces a handler of the
// program's, nor an ignored signal: the program's handler decides what happens, and when it
// ends the process with exit() or _exit() the summary is written there (atexit, and the _exit
// hook of shim/process_hooks.cc). Only where the program left the default action does the
// library put a stand-in for it: a handler that writes the summary, restores the default and
// raises the signal again, so the process dies by it with the same status. To the program the
// stand-in is the default action: the library exports sigaction() and signal(), which report
// it as SIG_DFL (with the mask and flags the program set), put it back when the program sets
// SIG_DFL again (a handler that cleans up, restores the default and re-raises), and step aside
// when the program installs a handler or ignores the signal. So a program, or a runtime such as
// Python or an MPI library that installs its handlers only over the default, sees exactly what
// it would see without the library. Replacing and chaining to the program's handlers instead
// would change what they see (sigaction reports the library's handler), their flags'
// effects (SA_RESETHAND, SA_NODEFER) and what runs first; HPC codes and their runtimes inspect
// and chain their handlers, so the library stays out of their way. Not seen: a program that
// sets a disposition through bsd_signal(), sysv_signal(), sigset() or the raw system call (the
// stand-in then stays in place, and still takes the default action after the summary).
constexpr int kSummarySignals[] = {SIGHUP, SIGINT, SIGTERM};
constexpr int kSignalCount = sizeof kSummarySignals / sizeof kSummarySignals[0];

std::atomic<bool> g_installed{false};
std::atomic<bool> g_standin[kSignalCount];
// The default action as the program set it (mask and flags), while the stand-in is in place.
struct sigaction g_program_view[kSignalCount];

int index_of(int sig) {
    for (int i = 0; i < kSignalCount; ++i)
        if (kSummarySignals[i] == sig) return i;
    return -1;
}

bool is_default(const struct sigaction& sa) {
    return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

// The C library's sigaction, not the one the library exports (which a call from here would
// reach: the exported symbol wins in the process). Resolved at load time, so that a signal
// handler never runs dlsym.
using SigactionFn = int(int, const struct sigaction*, struct sigaction*);
std::atomic<SigactionFn*> g_real_sigaction{nullptr};

SigactionFn* real_sigaction() {
    SigactionFn* f = g_real_sigaction.load(std::memory_order_acquire);
    if (!f) {
        f = reinterpret_cast<SigactionFn*>(dlsym(RTLD_NEXT, "sigaction"));
        g_real_sigaction.store(f, std::memory_order_release);
    }
    return f;
}

__attribute__((constructor)) void resolve_real_sigaction() { (void)real_sigaction(); }

int call_real_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    SigactionFn* f = real_sigaction();
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(sig, act, old);
}

// The log's summary writer (install_summary_signal_handlers), set before any stand-in exists.
std::atomic<void (*)()> g_write_summary{nullptr};

void on_terminating_signal(int sig, siginfo_t*, void*) {
    const int saved_errno = errno;
    if (void (*write)() = g_write_summary.load(std::memory_order_acquire)) write();
    const int i = index_of(sig);
    if (i >= 0 && g_standin[i].load(std::memory_order_acquire)) {
        // Blocked while this handler runs: delivered, with the default action, on return.
        g_standin[i].store(false, std::memory_order_release);
        struct sigaction dfl = g_program_view[i];
        dfl.sa_handler = SIG_DFL;
        call_real_sigaction(sig, &dfl, nullptr);
        raise(sig);
    }
    errno = saved_errno;
}

// The stand-in for signal i, whose default action the program set with `view`.
int install_standin(int i, const struct sigaction& view) {
    struct sigaction sa = {};
    sa.sa_sigaction = on_terminating_signal;
    sa.sa_mask = view.sa_mask;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | (view.sa_flags & SA_ONSTACK);
    g_program_view[i] = view;
    g_standin[i].store(true, std::memory_order_release);
    return call_real_sigaction(kSummarySignals[i], &sa, nullptr);
}

}  // namespace

void install_summary_signal_handlers(void (*write_summary)()) {
    g_write_summary.store(write_summary, std::memory_order_release);
    for (int i = 0; i < kSignalCount; ++i) {
        struct sigaction cur;
        if (call_real_sigaction(kSummarySignals[i], nullptr, &cur) == 0 && is_default(cur))
            install_standin(i, cur);
    }
    g_installed.store(true, std::memory_order_release);
}

bool summary_signal_watched(int sig) {
    return g_installed.load(std::memory_order_acquire) && index_of(sig) >= 0;
}

// No lock: sigaction() is async-signal-safe and may be called from a handler. Two threads
// setting the same signal at once race as they would without the library.
int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    const int i = index_of(sig);
    if (i < 0 || !g_installed.load(std::memory_order_acquire)) return call_real_sigaction(sig, act, old);
    struct sigaction view;
    if (g_standin[i].load(std::memory_order_acquire)) view = g_program_view[i];
    else if (call_real_sigaction(sig, nullptr, &view) != 0) return -1;
    if (act) {
        if (is_default(*act)) {
            if (install_standin(i, *act) != 0) return -1;
        } else {
            if (call_real_sigaction(sig, act, nullptr) != 0) return -1;
            g_standin[i].store(false, std::memory_order_release);
        }
    }
    if (old) *old = view;
    return 0;
}

}  // namespace amxblas

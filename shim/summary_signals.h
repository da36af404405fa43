// The summary at SIGTERM, SIGINT and SIGHUP (AMXBLAS_VERBOSE >= 1), and the program's view of
// those signals' dispositions. See summary_signals.cc for the design.
#pragma once

#include <signal.h>

namespace amxblas {

// Puts the library's stand-in in place of each of the three signals' default action (called
// once, at the first call the log sees). The stand-in calls write_summary (async-signal-safe):
// the log hands it in, so that this file needs nothing of the log's (no include cycle,
// tests/layers/check_layers.py).
void install_summary_signal_handlers(void (*write_summary)());

// sigaction() as the program sees it (the library exports it, shim/process_hooks.cc): for the
// three signals, a default action the stand-in replaces is reported as the default action the
// program set, and setting the default puts the stand-in back; everything else is passed to
// the C library's sigaction unchanged.
int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old);

// True when sig is one of the three and the stand-ins are in use: signal() must then go
// through program_sigaction.
bool summary_signal_watched(int sig);

}  // namespace amxblas

// The configuration, read once from the environment (thread-safe: a function-local static).
// An invalid value gives one warning on stderr naming the variable, the value and what is
// accepted, and the default is used.
#pragma once

#include <string>
#include <vector>

#include "policy/settings.h"

namespace amxblas {

// The process's configuration: read once, at its first BLAS call or before its first fork,
// with the warnings of shim/config_warnings.h (shim/settings.cc).
const Settings& settings();

// Parses an environment in the given form (a null-terminated getenv-like lookup); exposed so
// tests can check the parsing without touching the process environment. Each invalid value's
// warning goes to *warnings (no "amxblas: " prefix), or straight to stderr when it is null.
using EnvLookup = const char* (*)(const char* name);
Settings read_settings(EnvLookup lookup, int cores, std::vector<std::string>* warnings = nullptr);

// Says the configuration's warnings (read_settings()'s and shim/config_warnings.h's) on stderr,
// the first time it is called in the process tree: at the first intercepted BLAS call of any of
// the processes forked from the one that read the settings (shim/settings.cc). A process that
// only forks and execs (a shell, timeout, mpirun under LD_PRELOAD) says nothing; the program
// it runs reads the settings again and says them once.
void say_configuration_warnings();

}  // namespace amxblas

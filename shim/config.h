// The configuration, read once from the environment (thread-safe: a function-local static).
// An invalid value gives one warning on stderr naming the variable, the value and what is
// accepted, and the default is used.
#pragma once

#include "policy/settings.h"

namespace amxblas {

const Settings& settings();

// Parses an environment in the given form (a null-terminated getenv-like lookup); exposed so
// tests can check the parsing without touching the process environment.
using EnvLookup = const char* (*)(const char* name);
Settings read_settings(EnvLookup lookup, int cores);

}  // namespace amxblas

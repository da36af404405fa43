// Warnings about the configuration as a whole, for mistakes that would otherwise change nothing
// visible: one invalid value is read_settings()'s to report (shim/config.cc); these need the
// whole environment or the machine. Each is one line, said on stderr at every verbosity, once
// per process (shim/settings.cc).
#pragma once

#include <string>
#include <vector>

#include "policy/route.h"

namespace amxblas {

// The warnings (no "amxblas: " prefix, no newline), in this order:
//   - per variable of environment (NAME=VALUE strings, null-terminated, as environ) whose name
//     has the AMXBLAS_ prefix, in any case, and is in no row of shim/variables.def nor starts
//     with AMXBLAS_TEST_: it is ignored, and the nearest known name is given;
//   - AMXBLAS_LOG set while AMXBLAS_VERBOSE=0 turns logging off (without AMXBLAS_VERBOSE,
//     AMXBLAS_LOG turns it on: shim/config.cc);
//   - AMXBLAS_BACKEND naming a backend this machine cannot run (backend_request_warning()).
std::vector<std::string> configuration_warnings(const char* const* environment, const Settings& settings,
                                                const Hardware& hw);

}  // namespace amxblas

// Whether these settings can route anything on this machine. The forward reason of each call
// names only the first check that failed, so on a machine without AMX a user would otherwise
// learn one reason per run (fp64:disabled, then backend:no-amx); the log says it all once.
#pragma once

#include <string>

#include "policy/route.h"

namespace amxblas {

// "" when some call can be routed with these settings on this hardware; else one line (no
// "amxblas: " prefix, no newline) saying why none will be and which settings would route.
// costs: the cost model's constants for the backend the settings ask for (nullptr: built in).
std::string routing_outlook(const Settings& settings, const Hardware& hw, const CostTable* costs = nullptr);

// "" unless AMXBLAS_BACKEND names a backend this machine cannot run (the amx backend without AMX
// and without the harness, avx512 without AVX-512 BF16); else one warning line (no "amxblas: "
// prefix) that says so and names the backends that run here. AMXBLAS_BACKEND=auto asks for
// nothing by name: routing_outlook() speaks for it.
std::string backend_request_warning(const Settings& settings, const Hardware& hw);

// Writes routing_outlook() to the log once per process, when AMXBLAS_VERBOSE >= 1 and it is not
// empty; the first logged call does it.
void log_routing_outlook_once();

}  // namespace amxblas

// What this machine can run, detected once and cached: the one place that gathers hardware
// facts (the kernels' CPU detectors, the AMX harness, the cores of the affinity mask).
#pragma once

#include "policy/route.h"

namespace amxblas {

const Hardware& hardware();


}  // namespace amxblas

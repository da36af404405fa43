// What this machine can run, detected once and cached: the one place that gathers hardware
// facts (the kernels' CPU detectors, the AMX harness, the cores of the affinity mask).
#pragma once

#include "policy/route.h"

namespace amxblas {

const Hardware& hardware();

// True when the trap-and-emulate AMX harness (tests/amxemu) is loaded in this process: it
// exports `extern "C" int amxemu_harness_version(void)`. Not cached: a test may dlopen the
// harness after the first call.
bool amx_emulator_present();

}  // namespace amxblas

// What this machine can run, detected once and cached.
#pragma once

#include "policy/route.h"

namespace amxblas {

const Hardware& hardware();

}  // namespace amxblas

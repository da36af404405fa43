// Every forward reason and threads note the library prints: kernels/reasons.def, the one
// table (the kernels return these too, so it lives in the bottom layer). This header adds the
// policy's view of it. tests/policy/test_reasons.cc checks that docs/reasons.md documents
// exactly the names of all_reasons().
#pragma once

#include <cstddef>

#include "kernels/reasons.h"

namespace amxblas {

namespace reason {
// The unusable_reason of a backend every machine runs (kernels/backends.def): no reason.
inline constexpr const char* none = nullptr;
}  // namespace reason

// All names of kernels/reasons.def, in the order the checks run, notes last.
const ReasonEntry* all_reasons(std::size_t* count);

}  // namespace amxblas

// The policy's reasons (policy/reasons.def) as constants beside the kernels' (kernels/common/
// reasons.h), and every reason the library prints in one list. tests/policy/test_reasons.cc
// checks that docs/reasons.md documents exactly the names of all_reasons().
#pragma once

#include <cstddef>

#include "kernels/common/reasons.h"

namespace amxblas {

namespace reason {
#define AMXBLAS_REASON(id, name, kind) inline constexpr char id[] = name;
#include "policy/reasons.def"
#undef AMXBLAS_REASON
// The unusable_reason of a backend every machine runs (kernels/common/backends.def): no reason.
inline constexpr const char* none = nullptr;
}  // namespace reason

// Every row of policy/reasons.def, in its order.
inline constexpr ReasonEntry kPolicyReasons[] = {
#define AMXBLAS_REASON(id, name, kind) {reason::id, ReasonKind::kind},
#include "policy/reasons.def"
#undef AMXBLAS_REASON
};

// All reasons and notes the library prints: the policy's, then the kernels'.
const ReasonEntry* all_reasons(std::size_t* count);

}  // namespace amxblas

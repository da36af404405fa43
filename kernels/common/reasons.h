// The kernels' reasons (kernels/common/reasons.def) as constants, amxblas::reason::<id>, and as
// one array. A leaf: the kernels return these constants, the policy and the shim compare and
// print them. Each constant is an inline constexpr array, so every translation unit that names
// one gets the same address.
#pragma once

#include <cstddef>

namespace amxblas {

namespace reason {
#define AMXBLAS_REASON(id, name, kind) inline constexpr char id[] = name;
#include "kernels/common/reasons.def"
#undef AMXBLAS_REASON
}  // namespace reason

// forward: the call went to the real BLAS; beta_scale: the shim set C := BETA*C itself
// (route beta-scale); note: a threads note of a routed call.
enum class ReasonKind { forward, beta_scale, note };

struct ReasonEntry {
    const char* name;
    ReasonKind kind;
};

// Every row of kernels/common/reasons.def, in its order.
inline constexpr ReasonEntry kKernelReasons[] = {
#define AMXBLAS_REASON(id, name, kind) {reason::id, ReasonKind::kind},
#include "kernels/common/reasons.def"
#undef AMXBLAS_REASON
};

}  // namespace amxblas

// The process-wide state of the policy and the kernels, initialised all at once when the
// library is loaded (shim/after_fork.cc), so that no function-local static's guard can be in
// progress when the program forks (kernels/process_state.h says why that hangs the child).
#pragma once

namespace amxblas {

// kernels::settle_process_state(), then the policy's own choices: the domain scan's and the
// FP64 certificate's implementations. Idempotent.
void settle_policy_state();

}  // namespace amxblas

// What every engine's entry point does around its work: the backend check, the call's
// micro-kernel set, the clock of its phase times, and the guard that keeps exceptions from the
// C and Fortran callers. Shared by kernels/bf16/ and kernels/int8/ (and any engine of
// kernels/common/engines.def).
#pragma once

#include <chrono>
#include <new>

#include "kernels/common/gemm_types.h"
#include "kernels/common/reasons.h"
#include "kernels/isa/backend.h"

namespace amxblas::kernels {

// Runs an entry point's body. No exception may reach a C or Fortran caller; nothing below
// throws by design, so this is the last line of defence: a failed allocation forwards with
// memory:alloc-failed, anything else with internal:exception.
template <typename Fn>
const char* guarded(Fn&& fn) {
    try {
        return fn();
    } catch (const std::bad_alloc&) {
        return reason::memory_alloc_failed;
    } catch (...) {
        return reason::internal_exception;
    }
}

inline const char* check_backend(const RunOptions& opt) {
    if (!backend_built(opt.backend)) return reason::backend_not_built;
    if (!backend_usable(opt.backend, opt.amx_emulator)) return reason::backend_not_runnable;
    return nullptr;
}

// The call's micro-kernel set: the backend's, or the caller's own (RunOptions::microkernels).
inline MicroKernels kernels_for(const RunOptions& opt) {
    return opt.microkernels ? *opt.microkernels : microkernels_for(opt.backend);
}

inline double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace amxblas::kernels

// AMXBLAS_RECORD=DIR: writes calls to DIR, one .gemm file each, so that a user can send the very
// call that misbehaved and anyone can run it again with amxblas-replay (scripts/replay). By default
// only the calls the FP64 certificate declined (forwarded with accuracy:uncertified: the calls
// whose accuracy is in question); with AMXBLAS_RECORD_ALL=1 every call whose operands are
// defined. docs/log.md has the file format and the naming.
//
// A recorded file is the column-major call the library ran (a row-major CBLAS call is the
// column-major one on swapped operands), each operand the stored matrix as the caller passed
// it, compacted to the tight leading dimension, C as on entry. Recording never changes a
// result and never stops the program: a file that cannot be written, or the
// AMXBLAS_RECORD_MAX_MB cap, stops the recording with one warning. Each file is written with
// write(2) on its own descriptor, so nothing mixes with the program's stdio buffers, and
// concurrent calls write distinct files (the pid and a per-process counter name them).
#pragma once

#include "kernels/common/gemm_types.h"
#include "policy/reasons.h"
#include "policy/route.h"
#include "policy/settings.h"
#include "shim/blas_abi.h"

namespace amxblas {

// Writes the call's file (if the recording has not stopped). The caller guarantees that the
// operands are defined and that C is as on entry.
void record_call(const kernels::GemmArgs<float>& args);
void record_call(const kernels::GemmArgs<double>& args);
void record_call(const kernels::GemmArgs<cfloat>& args);
void record_call(const kernels::GemmArgs<cdouble>& args);

// AMXBLAS_RECORD_ALL=1, called before the call runs (C is written after). A call the policy
// forwards for its arguments (invalid or nonstandard ones, where the operands' extents are not
// defined), for having nothing to compute, or for sizes above 2^31 - 1, is not recorded.
template <typename T>
void record_on_entry(const Settings& s, const Decision& d, const kernels::GemmArgs<T>& args) {
    if (s.record_dir.empty() || !s.record_all) return;
    if (d.reason == reason::args_invalid || d.reason == reason::args_nonstandard ||
        d.reason == reason::size_empty || d.reason == reason::size_too_large)
        return;
    record_call(args);
}

// The default: a call the kernels declined for accuracy, before it is forwarded (a declined
// emulation has not written C).
template <typename T>
void record_if_uncertified(const Settings& s, const char* kernel_reason,
                           const kernels::GemmArgs<T>& args) {
    if (s.record_dir.empty() || s.record_all || kernel_reason != reason::accuracy_uncertified)
        return;
    record_call(args);
}

// In a forked child: its byte count starts from zero and a stopped recording starts again, as
// for a new process (its files carry its own pid).
void record_after_fork();

}  // namespace amxblas

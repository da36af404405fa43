// A sample of a GEMM's entries, as a GEMM of its own: rows I of op(A) and columns J of op(B),
// evenly spaced, copied (op applied) into an r x K and a K x c operand, so that entry (s, t) of
// the sample's product is entry (I[s], J[t]) of the call's, with the same K terms in the same
// order.
//
// What it is for: under auto, a call whose entries mostly fail the certificate at every count
// is recognised from its sample before it pays for the whole certificate
// (kernels/driver/routed_gemm.cc). The INT8 engine's certificate reads only per-row and
// per-column facts and the exact magnitude product of (i, j) (docs/fp64-int8.md, Section 4),
// so it decides a sampled entry exactly as in the whole call. The BF16 engine's splits scale
// each slice over the whole operand, so on the sample its verdict is an estimate of the call's.
//
// The sample holds at most 1/kSampleShare of C's entries (the two copies cost 2 (r + c) K / (M N K)
// of the call's work), at most kSampleSide rows and columns, and at least kSampleMin entries;
// a call too small for that is not sampled. The copies, and the workspaces of the engines that
// certify the sample on this thread, live in one lease of the workspace pool
// (kernels/runtime/workspace.h: WorkspaceArena), not on the heap: a program's second call of a
// size faults no page in.
#pragma once

#include <complex>
#include <cstddef>
#include <optional>

#include "kernels/common/gemm_types.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {

constexpr int kSampleSide = 16;
constexpr long kSampleShare = 1024;
constexpr long kSampleMin = 64;

template <typename T>
struct GemmSample {
    GemmArgs<T> args{};  // 'N', 'N', r x c x K, alpha 1, beta 0; c is null (no C is written)
    WorkspaceLease lease;                 // the copies, then the arena
    std::optional<WorkspaceArena> arena;  // the engines' leases on this thread, while it lives
    long entries() const { return long(args.m) * args.n; }
};

// False (and *out without a sample) when the call is too small to be sampled, or the lease
// failed. The arena is sized for every engine's certificate on opt.backend, one thread
// (Fp64EngineOps::sample_bytes), and for the screen before them (sample_screen.h).
template <typename T>
bool sample_gemm(const GemmArgs<T>& g, const RunOptions& opt, GemmSample<T>* out);

}  // namespace amxblas::kernels

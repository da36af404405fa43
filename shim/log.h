// The routing log. AMXBLAS_VERBOSE=2 writes one line per call; AMXBLAS_VERBOSE>=1 writes a
// summary per routine and route (and forward reason) when the process exits (exit or _exit),
// or when SIGTERM, SIGINT or SIGHUP ends it (shim/summary_signals.cc), and every AMXBLAS_SUMMARY_EVERY seconds if that is set. Each line is one
// write(2), so lines of concurrent threads and processes never interleave. The destination is
// AMXBLAS_LOG (appended to; %p becomes the pid, %r the MPI rank) or stderr.
#pragma once

#include <cstdint>

#include "policy/route.h"
#include "shim/blas_abi.h"

namespace amxblas {

struct CallRecord {
    Routine routine;
    const char* layout;  // "col" or "row"
    char transa, transb;
    std::int64_t m, n, k, lda, ldb, ldc;  // as the caller passed them (ILP64: 64-bit)
    Route route;
    const char* reason;   // forward reason, nullptr when routed
    const char* backend;  // kernel backend when routed
    int threads;
    const char* note;     // threads note, or nullptr
    // AMXBLAS_SHAPES=auto: the cost model's predicted speedup (predicted=1.80x), 0 when the
    // model was not consulted (no field).
    double predicted_speedup;
    // The model's time for the path the call took (its routed time, or the real BLAS's for a
    // call forwarded after the model was consulted); 0 when there is none (the model not
    // consulted, or the kernels forwarded a routed call). Compared with `seconds`: mispredicted=.
    double predicted_s;
    double seconds;
    // A routed FP64 call's line says engine=bf16|int8 products=N: BF16's product count is its
    // route's (fp64-N), INT8's moduli (route fp64-int8) are fp64_products. Under
    // AMXBLAS_FP64_PRODUCTS=auto (fp64_auto) the route is what the call picked, fp64_products
    // its count, and the line adds the certificate's margin and the entries repaired in FP64.
    bool fp64_auto;
    int fp64_products;
    double fp64_margin;
    long fp64_repaired;
};

// A call whose time is more than this factor off its prediction, either way, was mispredicted:
// its line carries mispredicted=RATIO (its time over the prediction) and its summary row counts
// it. The model's error on calls it was calibrated for is within about 25% (docs/cost-model.md):
// 1.5x is a miss no calibration noise explains. Nothing reads it back: routing never changes
// from what a run measures.
inline constexpr double kMispredictedFactor = 1.5;
// RATIO for a mispredicted call, else 0. Floating-point arithmetic: call it under the library's
// environment (kernels/common/fp_environment.h), as the log's other arithmetic.
double misprediction(const CallRecord& rec);

// Records one call (line and/or summary, as AMXBLAS_VERBOSE asks). Cheap when verbose is 0.
void log_call(const CallRecord& rec);

// Formats the per-call line into buf (no trailing newline); returns its length. For tests.
int format_call_line(const CallRecord& rec, char* buf, int size);

// Expands %p (pid) and %r (rank from OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID, else 0)
// into out, cut to size - 1 characters; returns the whole expansion's length, as snprintf does
// (the log refuses an AMXBLAS_LOG that does not fit rather than open the cut path). For tests;
// the log uses it on AMXBLAS_LOG.
int expand_log_path(const char* pattern, char* out, int size);

// At the start of every call (AMXBLAS_VERBOSE >= 1): the first one opens the log and puts the
// summary's exit and signal handlers in place, so that a signal during it gets a summary too.
void log_call_started();

// Writes the summary if this process has calls it has not summarised (or has started one and
// written none); async-signal-safe. For the process-end hooks (shim/process_hooks.cc).
void write_summary_now();

// One informational line in the log ("amxblas: " + text) when AMXBLAS_VERBOSE >= 1.
void log_note(const char* text);

// In a forked child (pthread_atfork): the counts start from zero (a child that makes no call
// writes no summary), the locks are fresh, and an AMXBLAS_LOG with %p is reopened for the
// child's pid on its first line.
void log_after_fork();

}  // namespace amxblas

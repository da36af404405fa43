// This process's wisdom (policy/wisdom.h; docs/cost-model.md, "Wisdom"): the file is
// AMXBLAS_WISDOM, else the per-user default $XDG_DATA_HOME/amxblas/wisdom (XDG_DATA_HOME unset
// or not absolute: ~/.local/share/amxblas/wisdom); AMXBLAS_WISDOM=none reads none. It is read
// once, when the cost model is first consulted, and an entry is taken for the real BLAS each
// routine resolved to when its key (the CPU, its features, the backend asked for, the routed
// calls' threads, that library's file and build, this library's version) equals this
// process's. Where there is none, the built-in constants (policy/cost_model.cc) are used: a file
// that cannot be read, is malformed, or is stale or foreign (its nearest entry is for another
// CPU, version of amxblas, BLAS library or build of it) gives one warning on stderr; a default
// file that does not exist, or entries for this machine under another backend or thread count,
// give none (the log's note says why). AMXBLAS_VERBOSE >= 1 notes once in the log which
// constants the model uses. Nothing here changes after it is first read: the same program on
// the same machine and file decides the same way on every call.
#pragma once

#include <string>

#include "policy/route.h"
#include "policy/wisdom.h"
#include "shim/blas_abi.h"

namespace amxblas {

// The file a process with these settings reads: "" for AMXBLAS_WISDOM=none (or no home).
// *named: it was named by AMXBLAS_WISDOM (then a missing file is worth a warning).
std::string wisdom_file(const Settings& s, bool* named = nullptr);

// This process's key for backend b, `threads` routed threads and the real BLAS holding `symbol`.
WisdomKey process_wisdom_key(kernels::Backend b, int threads, const void* blas_symbol);

// The constants the cost model uses for a backend, threads and real BLAS, and where they came
// from. file: the wisdom file read ("" if none); entry: the entry's "measured" text, when one
// matched; why: when none did, why not (for the log's note and amxblas-explain).
struct CostSource {
    CostTable table;
    std::string file, entry, why;
};
// Reads the file (every call; amxblas-explain and the calibration tool). `warn`: a file that
// cannot be used gives its warning on stderr.
CostSource find_cost_source(const Settings& s, kernels::Backend b, int threads, const void* blas_symbol, bool warn);

// The table the shim's decide() uses for calls of routine r: the backend the settings ask for,
// min(threads, cores), the library r resolved to. Found on the first call of r that consults
// the model, then kept; the file is read once per process and warned about at most once.
const CostTable& process_cost_table(Routine r);

// Once per process, after a call consulted the model (AMXBLAS_VERBOSE >= 1): the log's note on
// which constants it uses, the wisdom file's entry or the built-in ones and why.
void log_cost_model_note_once();

}  // namespace amxblas

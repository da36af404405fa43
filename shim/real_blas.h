// The real BLAS behind us: each routine is resolved once, thread-safely, on its first call.
// Order: dlsym(RTLD_NEXT) (the program's own BLAS); else a BLAS already loaded outside the
// global scope (numpy's, opened RTLD_LOCAL); else the library named by
// AMXBLAS_FALLBACK (an error if it cannot be loaded: no silent second choice); else
// libopenblas.so.0, else libblas.so.3. Never our own symbol. A fallback for the plain names
// must take 32-bit integers: an ILP64 AMXBLAS_FALLBACK is refused for them with one warning on
// stderr (it still serves the _64 names) and the default list, LP64 libraries only, is used;
// if none is there, one error names the routine and the process exits non-zero. A _64 name (dgemm_64_,
// cblas_dgemm_64) is looked up under its own name the same way, then under the plain name in
// a loaded library that is ILP64, then in an ILP64 AMXBLAS_FALLBACK, then in libopenblas64.so.0 and libblas64.so.3 (Debian's
// ILP64 builds, which keep the plain names); never in an LP64 library. When nothing provides the
// routine, one message names it and the variable to set, and the process exits non-zero:
// returning with C untouched would silently corrupt the user's results.
#pragma once

#include <atomic>

#include "shim/blas_abi.h"

namespace amxblas {

void* real_symbol(Routine r);

namespace detail {
// The resolved routines and their integer widths, set once each (the width before the routine,
// with release): the inline accessors below read them without a call, since every forwarded
// call goes through them (a tiny call's whole budget is some 20 ns: scripts/bench.sh --tiny).
extern std::atomic<void*> g_real_fn[kRoutineCount];
extern std::atomic<int> g_real_bits[kRoutineCount];
int resolve_index_bits(Routine r);
}  // namespace detail

// The width in bits of the integers the real routine behind r takes: 64 for the _64 names
// (routines.def's index column), and for a plain name whose library turns out to be ILP64
// (Debian's libblas64.so.3 and libopenblas64.so.0 keep the plain names with 64-bit
// integers); else 32. Measured once, when the routine is resolved, by calling the same
// library's DDOT with N = 2 in its low 32 bits and a negative 64-bit value: an LP64 DDOT
// returns the 2-term dot product, an ILP64 one returns 0 for a negative N without reading X
// or Y. A library without DDOT is taken at its name's word (32). The log says when a plain
// name is ILP64 (AMXBLAS_VERBOSE >= 1).
inline int real_index_bits(Routine r) {
    const int i = static_cast<int>(r);
    if (detail::g_real_fn[i].load(std::memory_order_acquire)) return detail::g_real_bits[i].load(std::memory_order_relaxed);
    return detail::resolve_index_bits(r);
}

template <typename Fn>
Fn* real(Routine r) {
    void* fn = detail::g_real_fn[static_cast<int>(r)].load(std::memory_order_acquire);
    return reinterpret_cast<Fn*>(fn ? fn : real_symbol(r));
}

}  // namespace amxblas

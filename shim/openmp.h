// Whether the calling thread is inside an OpenMP parallel region, without linking an OpenMP
// runtime: the library uses no OpenMP itself, and linking libgomp for this one question would
// load it into every preloaded program. The program's own runtime, if it has one loaded,
// answers; a program without one is never in a parallel region.
#pragma once

namespace amxblas {

bool in_openmp_parallel_region();

// pthread_atfork's prepare handler, and its parent and child handlers: a fork waits for a
// lookup in progress in another thread, so the child never inherits the dynamic loader's
// locks held or its data half written (shim/after_fork.cc).
void openmp_lookup_before_fork();
void openmp_lookup_after_fork();

}  // namespace amxblas

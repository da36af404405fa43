// Whether the calling thread is inside an OpenMP parallel region, without linking an OpenMP
// runtime: the library uses no OpenMP itself, and linking libgomp for this one question would
// load it into every preloaded program. The program's own runtime, if it has one loaded,
// answers; a program without one is never in a parallel region.
#pragma once

namespace amxblas {

bool in_openmp_parallel_region();

}  // namespace amxblas

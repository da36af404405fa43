// The phases of an FP64 call that AMX would not remove, measured here with the products taken
// out (bench_int8_phases.cc says how), for parts 2 and 3 of amxblas_bench_int8.
#pragma once

#include <cstddef>
#include <vector>

#include "bench/bench_int8.h"

namespace amxblas::bench {

// One DGEMM op(A) op(B) (no transposition) of engine `engine` at `products` (or kFp64Auto),
// with micro-kernels that do no arithmetic: *t gets the call's phase times, *wall_s its time.
// nullptr, or the reason the call was forwarded.
const char* untiled_call(const Int8Options& o, kernels::Fp64Engine engine, int products, const Shape& s,
                         const std::vector<double>& a, const std::vector<double>& b, std::vector<double>* c,
                         kernels::PhaseTimes* t, double* wall_s);
// The INT8 facts pass alone (both operands), seconds.
double facts_seconds(const Shape& s, const std::vector<double>& a, const std::vector<double>& b, int threads);
// memcpy of `bytes` split over `threads` threads, each its part; bytes read + written per second.
double memcpy_gbs(std::size_t bytes, int threads, int reps);
// Bytes an INT8 split + pack at `moduli` moves (see part 2's legend).
double int8_split_pack_bytes(const Shape& s, int moduli);

}  // namespace amxblas::bench

// One routed call as the shim runs it (shim/gemm_dispatch.h), timed: under the library's
// floating-point environment, the numeric-domain check (FP32's operand scan), then the kernels'
// emulation with its phase times. What calibration measures, and what the cost model's
// benchmarks (bench/model_sweep.cc, bench/mixed_workload.cc) compare with.
#pragma once

#include <complex>
#include <vector>

#include "kernels/common/gemm_types.h"

namespace amxblas::calibrate {

// The FP64 route of a DGEMM or ZGEMM call (FP32 and CGEMM have one): an engine and a count, or
// kernels::kFp64Auto.
struct Fp64Route {
    kernels::Fp64Engine engine = kernels::Fp64Engine::bf16;
    int products = 6;
};

struct RoutedRun {
    double seconds = 0;        // the whole call: the check and the emulation
    double scan_s = 0;         // the domain check
    kernels::PhaseTimes phases;
    kernels::Fp64AutoReport report;  // FP64 auto: what ran
    const char* forwarded = nullptr; // the reason, where the shim would have forwarded it
};

template <typename T>
RoutedRun run_routed(const kernels::GemmArgs<T>& args, kernels::Backend backend, int threads, Fp64Route fp64);

// Operands for calls by shape (values in [0, 1), as the sweep of docs/cost-model.md), grown as
// needed and kept: routine 0 SGEMM, 1 DGEMM, 2 CGEMM, 3 ZGEMM.
class ShapeOperands {
public:
    RoutedRun run(int routine, int m, int n, int k, kernels::Backend backend, int threads, Fp64Route fp64);

private:
    std::vector<float> af_, bf_, cf_;
    std::vector<double> a_, b_, c_;
};

}  // namespace amxblas::calibrate

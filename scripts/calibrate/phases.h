// The routed call's phases on this machine (policy/cost_model.h's per-core constants of one
// backend), measured as the calibration of docs/cost-model.md describes: a handful of shapes
// per route (FP32, FP64 on BF16 with 6 products, FP64 on INT8 with 16 moduli), run in rounds
// (a burst of load from elsewhere then falls on one run of many shapes, not on every run of
// one), the median of each; the per-core rate each median implies from kernels::PhaseTimes
// and the model's own counts, and the median over the shapes (the products and the INT8
// reconstruction, which PhaseTimes does not split, by least squares over the shapes).
#pragma once

#include <string>
#include <vector>

#include "kernels/common/gemm_types.h"
#include "policy/cost_model.h"

namespace amxblas::calibrate {

struct PhaseShape {
    int m, n, k;
};

// The shapes a backend is calibrated on: base side 256 where its step is fast (amx, avx512),
// 128 for the portable kernels; K from an eighth of the side to four sides, M and N giving
// every thread blocks of its own.
std::vector<PhaseShape> phase_shapes(kernels::Backend b);

struct PhaseResult {
    CostConstants constants;          // the measured fields set, the others as given
    unsigned long long measured = 0;  // bit i: kCostFields[i] was measured
    std::vector<std::string> notes;   // one line per route: shapes, median call, what it gave
    double seconds = 0;               // the measurement's own time
};

// Measures backend b (which must run here) on `threads` threads, `rounds` rounds after a
// warm-up; `builtin` is the backend's built-in table (the counts' geometry, and the constants
// a route could not give).
PhaseResult measure_phases(kernels::Backend b, int threads, int rounds, const CostConstants& builtin);

}  // namespace amxblas::calibrate

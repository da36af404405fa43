// The real BLAS's time model (policy/cost_model.h, BlasTimeModel) fitted to measured calls.
#pragma once

#include <vector>

#include "policy/cost_model.h"

namespace amxblas::calibrate {

struct BlasSample {
    int m, n, k;
    double seconds;  // the median of the call's runs
};

// The model with the least squared relative error over the samples, its five numbers >= 0
// (every subset of them solved by least squares, the best that is non-negative), per core for
// `threads` threads; `complex`: 8 flops per multiply-add instead of 2. The samples should make
// each term count somewhere: a call long in all three dimensions (the rate), short in one
// (that dimension's values), tiny (the fixed cost).
BlasTimeModel fit_blas_time(const std::vector<BlasSample>& samples, int threads, bool complex);

}  // namespace amxblas::calibrate

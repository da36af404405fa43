// The real BLAS's own time per routine, measured on a grid of shapes and fitted
// (scripts/calibrate/blas_fit.h): the shapes are sized to the library's speed, so that the
// largest call takes about 20 ms whatever the library (OpenBLAS on 2 cores: 512-950; netlib's
// reference BLAS: about 200), and each dimension is short (24, 64) in some calls and long in
// others. Measured in rounds over the grid, the median of each.
#pragma once

#include <vector>

#include "policy/cost_model.h"
#include "scripts/calibrate/blas_fit.h"
#include "scripts/calibrate/blas_library.h"

namespace amxblas::calibrate {

struct BlasRates {
    BlasTimeModel model;
    std::vector<BlasSample> samples;
    double seconds = 0;  // the measurement's own time
    int side = 0;        // the grid's long side
};

// Routine 0 SGEMM, 1 DGEMM, 2 CGEMM, 3 ZGEMM, on the library's `threads` threads.
BlasRates measure_blas(BlasLibrary& lib, int routine, int threads, int rounds);

}  // namespace amxblas::calibrate

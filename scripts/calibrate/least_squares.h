// Non-negative least squares on relative errors, for the calibration's fits: the x >= 0 that
// minimises sum_i (1 - (F_i . x) / t_i)^2, by solving every subset of the columns (a handful:
// 2^p small systems) and keeping the best non-negative solution. Returns x (zeros when no
// subset has one).
#pragma once

#include <vector>

namespace amxblas::calibrate {

std::vector<double> relative_nnls(const std::vector<std::vector<double>>& features, const std::vector<double>& targets);

}  // namespace amxblas::calibrate

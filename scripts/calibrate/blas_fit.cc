#include "scripts/calibrate/blas_fit.h"

#include "scripts/calibrate/least_squares.h"

namespace amxblas::calibrate {

BlasTimeModel fit_blas_time(const std::vector<BlasSample>& samples, int threads, bool complex) {
    // Columns: the fixed cost, then per core (x threads): C's values, op(A)'s, op(B)'s, and
    // the flops (1 / rate).
    std::vector<std::vector<double>> f;
    std::vector<double> t;
    const double flops = complex ? 8.0 : 2.0;
    for (const BlasSample& s : samples) {
        const double m = s.m, n = s.n, k = s.k;
        f.push_back({1, m * n / threads, m * k / threads, k * n / threads, flops * m * n * k / threads});
        t.push_back(s.seconds);
    }
    const std::vector<double> x = relative_nnls(f, t);
    BlasTimeModel model;
    model.fixed_s = x[0];
    model.c_s = x[1];
    model.a_s = x[2];
    model.b_s = x[3];
    model.flops_s = x[4] > 0 ? 1 / x[4] : 0;
    return model;
}

}  // namespace amxblas::calibrate

#include "scripts/calibrate/least_squares.h"

#include <cmath>
#include <limits>
#include <utility>

namespace amxblas::calibrate {

namespace {

// Solves the q x q system a x = b in place by Gauss-Jordan with partial pivoting; false when
// it is singular.
bool solve(std::vector<double>& a, std::vector<double>& b, int q) {
    for (int c = 0; c < q; ++c) {
        int pivot = c;
        for (int i = c + 1; i < q; ++i)
            if (std::fabs(a[i * q + c]) > std::fabs(a[pivot * q + c])) pivot = i;
        if (!(std::fabs(a[pivot * q + c]) > 0)) return false;
        if (pivot != c) {
            for (int j = 0; j < q; ++j) std::swap(a[c * q + j], a[pivot * q + j]);
            std::swap(b[c], b[pivot]);
        }
        for (int i = 0; i < q; ++i) {
            if (i == c) continue;
            const double f = a[i * q + c] / a[c * q + c];
            for (int j = 0; j < q; ++j) a[i * q + j] -= f * a[c * q + j];
            b[i] -= f * b[c];
        }
    }
    for (int c = 0; c < q; ++c) b[c] /= a[c * q + c];
    return true;
}

}  // namespace

std::vector<double> relative_nnls(const std::vector<std::vector<double>>& f, const std::vector<double>& t) {
    const int p = f.empty() ? 0 : int(f[0].size());
    std::vector<double> best(p, 0);
    double best_err = std::numeric_limits<double>::infinity();
    for (int mask = 1; mask < (1 << p); ++mask) {
        std::vector<int> cols;
        for (int j = 0; j < p; ++j)
            if (mask >> j & 1) cols.push_back(j);
        const int q = int(cols.size());
        // The normal equations of the scaled rows f_i / t_i against 1.
        std::vector<double> a(q * q, 0), b(q, 0);
        for (std::size_t i = 0; i < t.size(); ++i)
            for (int r = 0; r < q; ++r) {
                const double u = f[i][cols[r]] / t[i];
                b[r] += u;
                for (int c = 0; c < q; ++c) a[r * q + c] += u * f[i][cols[c]] / t[i];
            }
        if (!solve(a, b, q)) continue;
        std::vector<double> x(p, 0);
        bool feasible = true;
        for (int r = 0; r < q; ++r) {
            x[cols[r]] = b[r];
            feasible = feasible && b[r] >= 0 && std::isfinite(b[r]);
        }
        if (!feasible) continue;
        double err = 0;
        for (std::size_t i = 0; i < t.size(); ++i) {
            double pred = 0;
            for (int j = 0; j < p; ++j) pred += x[j] * f[i][j];
            err += (1 - pred / t[i]) * (1 - pred / t[i]);
        }
        if (err < best_err) {
            best_err = err;
            best = x;
        }
    }
    return best;
}

}  // namespace amxblas::calibrate

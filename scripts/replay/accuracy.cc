#include "scripts/replay/accuracy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scripts/replay/exact_sum.h"

namespace amxblas::replay {

namespace {

using Wide = long double;

// err / d with 0 / 0 = 0 and x / 0 = inf: an exact entry is no error, any error where the
// bound is zero is too much.
double ratio(double err, Wide d) {
    if (err == 0) return 0;
    if (d == 0 || std::isnan(err)) return std::numeric_limits<double>::infinity();
    return static_cast<double>(err / d);
}

// The error of computed value v against the exact sum s; inf for a NaN or Inf that the exact
// result, rounded, is not.
double error_of(const ExactSum& s, double v) {
    if (std::isfinite(v)) return s.distance_to(v);
    return s.rounded() == v ? 0 : std::numeric_limits<double>::infinity();
}

// The values the call reads are all finite (alpha and beta, A and B unless ALPHA = 0 or K = 0,
// C unless BETA = 0): only then is there an exact result.
bool reads_only_finite(const GemmFile& g) {
    for (double x : {g.alpha[0], g.alpha[1], g.beta[0], g.beta[1]})
        if (!std::isfinite(x)) return false;
    const int p = g.parts();
    auto finite = [p](const std::vector<double>& v, int ld, int rows, int cols) {
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows * p; ++i)
                if (!std::isfinite(v[static_cast<std::size_t>(j) * ld * p + i])) return false;
        return true;
    };
    const bool reads_ab = (g.alpha[0] != 0 || g.alpha[1] != 0) && g.k > 0;
    const bool reads_c = g.beta[0] != 0 || g.beta[1] != 0;
    return (!reads_ab || (finite(g.a, g.lda, g.a_rows, g.a_cols) && finite(g.b, g.ldb, g.b_rows, g.b_cols))) &&
           (!reads_c || finite(g.c, g.ldc, g.m, g.n));
}

struct Operands {
    const GemmFile& g;
    // Index (in values, not parts) of op(A)(i, l) and op(B)(l, j).
    std::size_t a_at(int i, int l) const {
        const std::size_t idx = g.transa == 'N' ? i + static_cast<std::size_t>(l) * g.lda
                                                : l + static_cast<std::size_t>(i) * g.lda;
        return idx * g.parts();
    }
    std::size_t b_at(int l, int j) const {
        const std::size_t idx = g.transb == 'N' ? l + static_cast<std::size_t>(j) * g.ldb
                                                : j + static_cast<std::size_t>(l) * g.ldb;
        return idx * g.parts();
    }
};

double unit_roundoff(const GemmFile& g) { return g.single ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }

Wide gamma(int n, double u) { return Wide(n) * u / (1 - Wide(n) * u); }

Accuracy measure_real(const GemmFile& g, const std::vector<double>& c) {
    const Operands op{g};
    const double alpha = g.alpha[0], beta = g.beta[0];
    const bool products = alpha != 0 && g.k > 0;
    const double u = unit_roundoff(g);
    const Wide gk = gamma(g.k, u), update = gamma(2, u) * (1 + gk);
    Accuracy acc;
    ExactSum s;
    for (int j = 0; j < g.n; ++j) {
        for (int i = 0; i < g.m; ++i) {
            s.clear();
            Wide w = 0;
            if (products) {
                for (int l = 0; l < g.k; ++l) {
                    const double a = g.a[op.a_at(i, l)], b = g.b[op.b_at(l, j)];
                    s.add(alpha, a, b);
                    w += Wide(std::fabs(a)) * std::fabs(b);
                }
            }
            const std::size_t ci = i + static_cast<std::size_t>(j) * g.ldc;
            const Wide c0 = beta != 0 ? Wide(std::fabs(beta)) * std::fabs(g.c[ci]) : 0;
            if (beta != 0) s.add(beta, g.c[ci]);
            const double err = error_of(s, c[ci]);
            const Wide scale = std::fabs(alpha) * w + c0;
            acc.error = std::max(acc.error, ratio(err, scale));
            acc.bound = std::max(acc.bound, ratio(err, gk * std::fabs(alpha) * w + update * scale));
        }
    }
    return acc;
}

Accuracy measure_complex(const GemmFile& g, const std::vector<double>& c) {
    const Operands op{g};
    const double ar_ = g.alpha[0], ai_ = g.alpha[1], br_ = g.beta[0], bi_ = g.beta[1];
    const bool products = (ar_ != 0 || ai_ != 0) && g.k > 0;
    const bool reads_c = br_ != 0 || bi_ != 0;
    const double conj_a = g.transa == 'C' ? -1 : 1, conj_b = g.transb == 'C' ? -1 : 1;
    const double u = unit_roundoff(g);
    const Wide gk = gamma(g.k + 1, u), update = gamma(4, u) * (1 + std::sqrt(Wide(2)) * gk);
    const Wide abs_alpha = std::hypot(Wide(ar_), Wide(ai_)), abs_beta = std::hypot(Wide(br_), Wide(bi_));
    Accuracy acc;
    ExactSum re, im;
    for (int j = 0; j < g.n; ++j) {
        for (int i = 0; i < g.m; ++i) {
            re.clear();
            im.clear();
            Wide w_re = 0, w_im = 0, w_mod = 0;
            if (products) {
                for (int l = 0; l < g.k; ++l) {
                    const std::size_t ia = op.a_at(i, l), ib = op.b_at(l, j);
                    const double xr = g.a[ia], xi = conj_a * g.a[ia + 1];
                    const double yr = g.b[ib], yi = conj_b * g.b[ib + 1];
                    // alpha (x y): Re = ar (xr yr - xi yi) - ai (xr yi + xi yr), Im likewise.
                    re.add(ar_, xr, yr);
                    re.add(-ar_, xi, yi);
                    re.add(-ai_, xr, yi);
                    re.add(-ai_, xi, yr);
                    im.add(ar_, xr, yi);
                    im.add(ar_, xi, yr);
                    im.add(ai_, xr, yr);
                    im.add(-ai_, xi, yi);
                    const Wide axr = std::fabs(xr), axi = std::fabs(xi), ayr = std::fabs(yr), ayi = std::fabs(yi);
                    w_re += axr * ayr + axi * ayi;
                    w_im += axr * ayi + axi * ayr;
                    w_mod += std::hypot(axr, axi) * std::hypot(ayr, ayi);
                }
            }
            const std::size_t ci = (i + static_cast<std::size_t>(j) * g.ldc) * 2;
            Wide c0 = 0;
            if (reads_c) {
                const double cr = g.c[ci], cim = g.c[ci + 1];
                re.add(br_, cr);
                re.add(-bi_, cim);
                im.add(br_, cim);
                im.add(bi_, cr);
                c0 = abs_beta * std::hypot(Wide(cr), Wide(cim));
            }
            const double err_re = error_of(re, c[ci]), err_im = error_of(im, c[ci + 1]);
            const Wide scale = abs_alpha * w_mod + c0;
            acc.error = std::max(acc.error, ratio(std::hypot(err_re, err_im), scale));
            const Wide slack = update * scale;
            const Wide b_re = gk * (std::fabs(ar_) * w_re + std::fabs(ai_) * w_im) + slack;
            const Wide b_im = gk * (std::fabs(ar_) * w_im + std::fabs(ai_) * w_re) + slack;
            acc.bound = std::max({acc.bound, ratio(err_re, b_re), ratio(err_im, b_im)});
        }
    }
    return acc;
}

}  // namespace

Accuracy measure(const GemmFile& g, const std::vector<double>& c) {
    if (!reads_only_finite(g)) {
        Accuracy acc;
        acc.defined = false;
        return acc;
    }
    return g.complex ? measure_complex(g, c) : measure_real(g, c);
}

}  // namespace amxblas::replay

// The certificate of fp64_certificate.h; docs/fp64-certificate.md proves each term.
#include "policy/fp64_certificate.h"

#include <algorithm>
#include <cmath>

#include "kernels/thread_pool.h"

namespace amxblas {
namespace {

constexpr double kU = 0x1p-53;               // unit roundoff of FP64
constexpr double kEvalUp = 1 + 0x1p-30;      // covers the FP64 evaluation of the bound itself
constexpr double kEvalDown = 1 - 0x1p-30;
constexpr int kMinSliceExp = -1000;          // kernels::kFp64MinSliceExp (kernels/split.h)

int products_of(int d) { return d * (d + 1) / 2; }

// The per-depth constants of the accumulation bound (docs/fp64-certificate.md, Section 4):
// E <= c1 * W + c2 * sum_s w_s M_s, where W is the mass of all retained products, M_s that of
// diagonal s >= 1 and w_s = s (s + 3) / 2; small[s] = c1 + c2 * w_s multiplies M_s.
struct DepthConstants {
    double c1 = 0, eta = 0;
    double small[kernels::kFp64Slices] = {};
};

struct alignas(64) NeedPartial {
    long count[kernels::kFp64Slices + 2] = {};
};
struct alignas(64) MarginPartial {
    long failing = 0;
    double margin = INFINITY;
};

}  // namespace

long fp64_repair_limit(int m, int n) { return long(m) * n / 16; }

bool fp64_certify(const kernels::Fp64SplitFacts& a, const kernels::Fp64SplitFacts& b, int k, const double* lhat,
                  int ldl, double tol, int min_depth, int threads, Fp64Certificate* out, int gamma_terms) {
    *out = Fp64Certificate{};
    const int m = a.outer, n = b.outer, dmax = std::min(a.slices, b.slices);
    const double ku = double(k) * kU;
    const double nu = double(gamma_terms > 0 ? gamma_terms : k) * kU;  // DGEMM: nu == ku
    if (ku >= 0x1p-10 || nu >= 0x1p-10 || gamma_terms < 0 || dmax < min_depth || !(tol > 0)) return false;
    const double gamma_k = nu / (1 - nu);
    const int panels = (k + 255) / 256;
    const double l_up = 1 + 2 * panels * kU;  // lhat is within (1 + u)^(panels - 1) of the exact sum
    const int dn = dmax + 1;

    // Entry bounds of the slices (alpha_p, beta_q) and the (0, 0) scale.
    double alpha[kernels::kFp64Slices] = {}, beta[kernels::kFp64Slices] = {};
    for (int p = 0; p < a.active; ++p) alpha[p] = std::ldexp(1.0, a.v[p]);
    for (int q = 0; q < b.active; ++q) beta[q] = std::ldexp(1.0, b.v[q]);
    const double s00 = (a.active > 0 && b.active > 0) ? alpha[0] * beta[0] : 0;
    const double delta_a = a.active > 0 ? std::ldexp(1.0, a.v[0] - 9) * (1 + 0x1p-40) : 0;
    const double delta_b = b.active > 0 ? std::ldexp(1.0, b.v[0] - 9) * (1 + 0x1p-40) : 0;

    DepthConstants dc[kernels::kFp64Slices + 1];
    for (int d = min_depth; d <= dmax; ++d) {
        const int np = products_of(d);
        const double nterms = double(np) * panels;
        const double grow = 1 + 2 * nterms * kU;  // >= (1 + u)^N for N u <= 2^-10
        dc[d].c1 = kU * grow * (double(np - 1) * (panels - 1) + panels);
        for (int sd = 1; sd < d; ++sd) dc[d].small[sd] = dc[d].c1 + kU * grow * (sd * (sd + 3) / 2);
        bool under = false;
        for (int p = 0; p < std::min(d, a.active); ++p)
            for (int q = 0; q < std::min(d - p, b.active); ++q) under = under || a.v[p] + b.v[q] < kMinSliceExp;
        dc[d].eta = under ? (nterms + 2) * 0x1p-1074 * 2 : 0;  // in practice 0
    }

    // Row parts: tau's sum over p of a_p(i) rho_B(d - p), plus the small products' mass with q >= 1.
    std::vector<double> row_part(std::size_t(dn) * m), col_part(std::size_t(dn) * n), a0(m), b0(n);
    kernels::parallel_for(threads, m, [&](int i, int) {
        double ap[kernels::kFp64Slices] = {};
        for (int p = 0; p < a.active; ++p) ap[p] = a.norms[std::size_t(p) * m + i] * alpha[p];
        a0[i] = ap[0];
        for (int d = min_depth; d <= dmax; ++d) {
            double tau = 0, small = 0;
            for (int p = 0; p < d; ++p) {
                tau += ap[p] * b.rho[d - p];
                for (int q = 1; p + q < d; ++q) small += dc[d].small[p + q] * (ap[p] * beta[q]);
            }
            row_part[std::size_t(d) * m + i] = tau + small + dc[d].eta;
        }
    });
    kernels::parallel_for(threads, n, [&](int j, int) {
        double bq[kernels::kFp64Slices] = {};
        for (int q = 0; q < b.active; ++q) bq[q] = b.norms[std::size_t(q) * n + j] * beta[q];
        b0[j] = bq[0];
        double bbar = double(k) * b.rho[b.slices];  // >= ||Bhat(:, j)||_1
        for (int q = 0; q < b.slices; ++q) bbar += bq[q];
        for (int d = min_depth; d <= dmax; ++d) {
            double small = 0;
            for (int p = 1; p < d; ++p) small += dc[d].small[p] * (alpha[p] * bq[0]);
            col_part[std::size_t(d) * n + j] = a.rho[d] * bbar + small;
        }
    });

    const auto rhs_of = [&](int i, int j) {
        const double x = lhat[i + std::size_t(j) * ldl] * s00;
        const double xlo = x / l_up;
        const double sub = delta_b * a0[i] + delta_a * b0[j];
        const double lo = std::max(xlo - sub, xlo * 0.25) * (1 - 0x1p-40);
        return tol * gamma_k * lo * kEvalDown;
    };
    const auto lhs_of = [&](int i, int j, int d) {
        const double u00 = lhat[i + std::size_t(j) * ldl] * s00 * l_up;
        return (row_part[std::size_t(d) * m + i] + col_part[std::size_t(d) * n + j] + dc[d].c1 * u00) * kEvalUp;
    };
    const auto exact_zero = [&](int i, int j) { return (a.zero && a.zero[i]) || (b.zero && b.zero[j]); };
    // Pass 1: each entry's smallest passing depth (dmax + 1: none), counted per depth.
    const int parts = std::max(1, threads);
    std::vector<NeedPartial> need(parts);
    kernels::parallel_for(threads, n, [&](int j, int who) {
        for (int i = 0; i < m; ++i) {
            if (exact_zero(i, j)) continue;
            const double r = rhs_of(i, j);
            int d = min_depth;
            while (d <= dmax && !(lhs_of(i, j, d) <= r)) ++d;
            ++need[who].count[d];
        }
    });
    long needed[kernels::kFp64Slices + 2] = {};
    for (const NeedPartial& pp : need)
        for (int d = 0; d <= dmax + 1; ++d) needed[d] += pp.count[d];
    int d = min_depth;
    for (int q = min_depth; q <= dmax; ++q)
        if (needed[q] > 0) d = q;
    if (needed[dmax + 1] > 0) d = dmax;  // some entry passes nowhere: the deepest fails least
    // Pass 2, at that depth: the failing entries (an entry's bound need not shrink with d, so a
    // depth deeper than its smallest may fail it; the next depth is tried then) and the margin.
    for (;; ++d) {
        std::vector<MarginPartial> part(parts);
        kernels::parallel_for(threads, n, [&](int j, int who) {
            for (int i = 0; i < m; ++i) {
                if (exact_zero(i, j)) continue;
                const double l = lhs_of(i, j, d), r = rhs_of(i, j);
                if (!(l <= r)) ++part[who].failing;
                else if (l > 0) part[who].margin = std::min(part[who].margin, r / l);
            }
        });
        long failing = 0;
        double margin = INFINITY;
        for (const MarginPartial& pp : part) {
            failing += pp.failing;
            margin = std::min(margin, pp.margin);
        }
        if (failing > needed[dmax + 1] && d < dmax) continue;
        out->depth = d;
        out->failing = failing;
        out->margin = margin;
        break;
    }
    if (out->failing > 0)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i)
                if (!exact_zero(i, j) && !(lhs_of(i, j, d) <= rhs_of(i, j))) out->fail_at.push_back(i + std::size_t(j) * m);
    return true;
}

}  // namespace amxblas

// The certificate of fp64_certificate.h; docs/fp64-certificate.md proves each term.
#include "policy/fp64_certificate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

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
    int deepest = 0;   // the largest smallest-passing depth among entries that pass somewhere
    long nowhere = 0;  // entries that pass at no depth
};
struct alignas(64) MarginPartial {
    long failing = 0;
    double margin = INFINITY;
};

// One thread's per-column arrays for the entry test (sized m on first use).
struct ColumnScratch {
    std::vector<double> rhs, u00, ratio;
    std::vector<std::int64_t> best;  // as wide as a double: the compare and the select vectorise together
    void resize(int m) {
        if (int(rhs.size()) == m) return;
        rhs.resize(std::size_t(m));
        u00.resize(std::size_t(m));
        ratio.resize(std::size_t(m));
        best.resize(std::size_t(m));
    }
};

// The entry test's loops over the rows i of one column, as free functions of restrict
// pointers and values so the compiler can keep everything in registers and vectorise them.
// Each is the proof's expression in the proof's order; fp64_certify explains the terms.

// rhs[i] (tol gamma_K Lo_ij, rounded down) and u00[i] (the (0, 0) term's upper bound).
void halves_of_column(int m, const double* __restrict lj, const double* __restrict a0, double s00, double l_up,
                      double delta_b, double sb, double tg, double* __restrict rhs, double* __restrict u00) {
    for (int i = 0; i < m; ++i) {
        const double x = lj[i] * s00;
        const double xlo = x / l_up;
        const double sub = delta_b * a0[i] + sb;
        const double lo = std::max(xlo - sub, xlo * 0.25) * (1 - 0x1p-40);
        rhs[i] = tg * lo * kEvalDown;
        u00[i] = x * l_up;
    }
}

// best[i] := d where entry i passes at depth d (called for d descending: the smallest wins).
void pass_at(int m, std::int64_t d, const double* __restrict rp, double cp, double c1, const double* __restrict u00,
             const double* __restrict rhs, std::int64_t* __restrict best) {
    for (int i = 0; i < m; ++i) {
        const double l = (rp[i] + cp + c1 * u00[i]) * kEvalUp;
        best[i] = l <= rhs[i] ? d : best[i];
    }
}

// ratio[i]: rhs / lhs where the entry passes with lhs > 0, +inf where it passes with lhs = 0,
// -1 where it fails.
void ratios_at(int m, const double* __restrict rp, double cp, double c1, const double* __restrict u00,
               const double* __restrict rhs, double* __restrict ratio) {
    for (int i = 0; i < m; ++i) {
        const double l = (rp[i] + cp + c1 * u00[i]) * kEvalUp;
        const double q = rhs[i] / (l > 0 ? l : 1.0);
        ratio[i] = l <= rhs[i] ? (l > 0 ? q : INFINITY) : -1.0;
    }
}

}  // namespace

long fp64_repair_limit(int m, int n) { return long(m) * n / 16; }

bool fp64_certify(const kernels::Fp64SplitFacts& a, const kernels::Fp64SplitFacts& b, int k, const double* lhat,
                  int ldl, double tol, int min_depth, int threads, Fp64Certificate* out) {
    *out = Fp64Certificate{};
    const int m = a.outer, n = b.outer, dmax = std::min(a.slices, b.slices);
    const double ku = double(k) * kU;
    if (ku >= 0x1p-10 || dmax < min_depth || !(tol > 0)) return false;
    const double gamma_k = ku / (1 - ku);
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

    // The per-entry test, one column at a time (the entries of column j are contiguous in
    // lhat): each step below is a loop over i with no branch and no loop-carried dependence but
    // the reductions, so the compiler vectorises it. Every bound is the same expression, in the
    // same order, as the proof's (-ffp-contract=off), hence the same decisions on every build.
    const double tg = tol * gamma_k;
    const auto rhs_of = [&](int i, int j) {
        const double x = lhat[i + std::size_t(j) * ldl] * s00;
        const double xlo = x / l_up;
        const double sub = delta_b * a0[i] + delta_a * b0[j];
        const double lo = std::max(xlo - sub, xlo * 0.25) * (1 - 0x1p-40);
        return tg * lo * kEvalDown;
    };
    const auto lhs_of = [&](int i, int j, int d) {
        const double u00 = lhat[i + std::size_t(j) * ldl] * s00 * l_up;
        return (row_part[std::size_t(d) * m + i] + col_part[std::size_t(d) * n + j] + dc[d].c1 * u00) * kEvalUp;
    };
    const unsigned char* a_zero = a.zero;
    const auto b_zero = [&](int j) { return b.zero && b.zero[j]; };
    const int parts = std::max(1, std::min(threads, n));
    std::vector<ColumnScratch> scratch(static_cast<std::size_t>(parts));
    // rhs[i] and u00[i] of column j (the depth-independent halves of the test).
    const auto column_halves = [&](int j, ColumnScratch& cs) {
        halves_of_column(m, lhat + std::size_t(j) * ldl, a0.data(), s00, l_up, delta_b, delta_a * b0[j], tg, cs.rhs.data(),
                      cs.u00.data());
    };
    // Pass 1: each entry's smallest passing depth (dmax + 1: none); only the largest of them and
    // the number passing nowhere matter. Depths are tried deepest first so the last pass wins.
    std::vector<NeedPartial> need(static_cast<std::size_t>(parts));
    kernels::parallel_for(threads, n, [&](int j, int who) {
        if (b_zero(j)) return;
        ColumnScratch& cs = scratch[std::size_t(who)];
        cs.resize(m);
        column_halves(j, cs);
        const double* rhs = cs.rhs.data();
        const double* u00 = cs.u00.data();
        std::int64_t* best = cs.best.data();
        std::fill(best, best + m, dmax + 1);
        for (int d = dmax; d >= min_depth; --d)
            pass_at(m, d, row_part.data() + std::size_t(d) * m, col_part[std::size_t(d) * n + j], dc[d].c1, u00, rhs, best);
        int deepest = need[std::size_t(who)].deepest;
        long nowhere = 0;
        for (int i = 0; i < m; ++i) {
            const int bi = (a_zero && a_zero[i]) ? min_depth : int(best[i]);
            nowhere += bi == dmax + 1;
            deepest = std::max(deepest, bi == dmax + 1 ? min_depth : bi);
        }
        need[std::size_t(who)].deepest = deepest;
        need[std::size_t(who)].nowhere += nowhere;
    });
    int d = min_depth;
    long nowhere = 0;
    for (const NeedPartial& pp : need) {
        d = std::max(d, pp.deepest);
        nowhere += pp.nowhere;
    }
    if (nowhere > 0) d = dmax;  // some entry passes nowhere: the deepest fails least
    // Pass 2, at that depth: the failing entries (an entry's bound need not shrink with d, so a
    // depth deeper than its smallest may fail it; the next depth is tried then) and the margin.
    for (;; ++d) {
        std::vector<MarginPartial> part(static_cast<std::size_t>(parts));
        kernels::parallel_for(threads, n, [&](int j, int who) {
            if (b_zero(j)) return;
            ColumnScratch& cs = scratch[std::size_t(who)];
            cs.resize(m);
            column_halves(j, cs);
            const double* rhs = cs.rhs.data();
            const double* u00 = cs.u00.data();
            double* ratio = cs.ratio.data();
            ratios_at(m, row_part.data() + std::size_t(d) * m, col_part[std::size_t(d) * n + j], dc[d].c1, u00, rhs, ratio);
            if (a_zero)  // exact-zero rows are not tested
                for (int i = 0; i < m; ++i) ratio[i] = a_zero[i] ? INFINITY : ratio[i];
            // Four independent minima keep the reduction off one dependence chain; the minimum
            // of a set does not depend on the order it is taken in.
            double mn[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
            long failing = 0;
            int i = 0;
            for (; i + 4 <= m; i += 4)
                for (int t = 0; t < 4; ++t) {
                    failing += ratio[i + t] < 0;
                    mn[t] = std::min(mn[t], ratio[i + t] < 0 ? INFINITY : ratio[i + t]);
                }
            for (; i < m; ++i) {
                failing += ratio[i] < 0;
                mn[0] = std::min(mn[0], ratio[i] < 0 ? INFINITY : ratio[i]);
            }
            MarginPartial& pp = part[std::size_t(who)];
            pp.failing += failing;
            pp.margin = std::min({pp.margin, mn[0], mn[1], mn[2], mn[3]});
        });
        long failing = 0;
        double margin = INFINITY;
        for (const MarginPartial& pp : part) {
            failing += pp.failing;
            margin = std::min(margin, pp.margin);
        }
        if (failing > nowhere && d < dmax) continue;
        out->depth = d;
        out->failing = failing;
        out->margin = margin;
        break;
    }
    const auto exact_zero = [&](int i, int j) { return (a_zero && a_zero[i]) || b_zero(j); };
    if (out->failing > 0)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i)
                if (!exact_zero(i, j) && !(lhs_of(i, j, d) <= rhs_of(i, j))) out->fail_at.push_back(i + std::size_t(j) * m);
    return true;
}

}  // namespace amxblas

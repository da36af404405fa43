// The certificate of fp64_certificate.h; docs/fp64-certificate.md proves each term.
#include "kernels/certificate/fp64_certificate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/runtime/per_participant.h"
#include "kernels/runtime/thread_pool.h"
#include "kernels/isa/isa.h"

namespace amxblas::kernels {
namespace {

constexpr double kU = 0x1p-53;               // unit roundoff of FP64
constexpr double kEvalUp = 1 + 0x1p-30;      // covers the FP64 evaluation of the bound itself
constexpr double kEvalDown = 1 - 0x1p-30;
constexpr int kMinSliceExp = -1000;          // kFp64MinSliceExp (kernels/isa/split.h)

int products_of(int d) { return fp64_products_of_depth(d); }

// The per-depth constants of the accumulation bound (docs/fp64-certificate.md, Section 4):
// E <= c1 * W + c2 * sum_s w_s M_s, where W is the mass of all retained products, M_s that of
// diagonal s >= 1 and w_s = s (s + 3) / 2; small[s] = c1 + c2 * w_s multiplies M_s.
struct DepthConstants {
    double c1 = 0, eta = 0;
    double small[kFp64Slices] = {};
};

struct alignas(kCacheLine) NeedPartial {
    std::int64_t deepest = 0;  // the largest smallest-passing depth among entries that pass somewhere
    std::int64_t nowhere = 0;  // entries that pass at no depth
};
struct alignas(kCacheLine) MarginPartial {
    std::int64_t failing = 0;
    double margin = INFINITY;
};

// One participant's per-column arrays for the entry test, m entries each.
struct ColumnScratch {
    std::vector<double> rhs, u00;
    std::vector<std::int64_t> best;  // as wide as a double: the compare and the select vectorise together
    explicit ColumnScratch(int m) : rhs(std::size_t(m)), u00(std::size_t(m)), best(std::size_t(m)) {}
};

}  // namespace


long fp64_repair_limit(int m, int n) {
    const long entries = long(m) * n;
    return std::min(std::max(entries / 16, 1L), (entries - 1) / 2);
}

bool fp64_certify(const Fp64SplitFacts& a, const Fp64SplitFacts& b, int k, const double* lhat,
                  int ldl, double tol, int min_depth, int threads, Fp64Certificate* out, int gamma_terms,
                  const std::function<bool(int, int)>& zero_by_structure) {
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
    double alpha[kFp64Slices] = {}, beta[kFp64Slices] = {};
    for (int p = 0; p < a.active; ++p) alpha[p] = std::ldexp(1.0, a.v[p]);
    for (int q = 0; q < b.active; ++q) beta[q] = std::ldexp(1.0, b.v[q]);
    const double s00 = (a.active > 0 && b.active > 0) ? alpha[0] * beta[0] : 0;
    const double delta_a = a.active > 0 ? std::ldexp(1.0, a.v[0] - 9) * (1 + 0x1p-40) : 0;
    const double delta_b = b.active > 0 ? std::ldexp(1.0, b.v[0] - 9) * (1 + 0x1p-40) : 0;

    DepthConstants dc[kFp64Slices + 1];
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
    parallel_for(threads, m, [&](int i, int) {
        double ap[kFp64Slices] = {};
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
    parallel_for(threads, n, [&](int j, int) {
        double bq[kFp64Slices] = {};
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
    // Entries zero by structure (Section 10), i + j * m ascending; found only when needed.
    std::vector<std::size_t> structural;
    const auto structural_in = [&](int j) {
        const auto first = std::lower_bound(structural.begin(), structural.end(), std::size_t(j) * m);
        return std::make_pair(first, std::lower_bound(first, structural.end(), std::size_t(j + 1) * m));
    };
    // +inf on the exact-zero rows of op(A): their entries pass everywhere (C_ij = 0 exactly).
    std::vector<double> row_inf(std::size_t(m), 0.0);
    if (a_zero)
        for (int i = 0; i < m; ++i) row_inf[i] = a_zero[i] ? INFINITY : 0.0;
    const int parts = std::max(1, std::min(threads, n));
    // Sized here, by the caller, not by each participant on its first column: which thread
    // takes part in a call varies from call to call, and allocations made in a varying order
    // (and on a varying thread's heap) leave the heap reaching fresh pages in a later call,
    // each a page fault inside that call (kernels_second_call_test).
    std::vector<ColumnScratch> scratch(static_cast<std::size_t>(parts), ColumnScratch(m));
    // rhs[i] and u00[i] of column j (the depth-independent halves of the test).
    const detail::CertLoops& loops = *isa_kernels().certificate;
    const auto column_halves = [&](int j, int who) -> ColumnScratch& {
        ColumnScratch& cs = scratch[std::size_t(who)];
        loops.halves(m, lhat + std::size_t(j) * ldl, a0.data(), row_inf.data(), s00, l_up, delta_b, delta_a * b0[j], tg,
                     cs.rhs.data(), cs.u00.data());
        if (!structural.empty()) {
            const auto range = structural_in(j);
            for (auto e = range.first; e != range.second; ++e) cs.rhs[*e - std::size_t(j) * m] = INFINITY;
        }
        return cs;
    };
    // Pass 1: each entry's smallest passing depth (dmax + 1: none); only the largest of them and
    // the number passing nowhere matter. Depths are tried deepest first so the last pass wins.
    int d = min_depth;
    std::int64_t nowhere = 0;
    const auto pass_1 = [&] {
        PerParticipant<NeedPartial> need(static_cast<std::size_t>(parts));
        parallel_for(threads, n, [&](int j, int who) {
            if (b_zero(j)) return;
            ColumnScratch& cs = column_halves(j, who);
            std::int64_t* best = cs.best.data();
            std::fill(best, best + m, dmax + 1);
            for (int dd = dmax; dd >= min_depth; --dd)
                loops.pass_at(m, dd, row_part.data() + std::size_t(dd) * m, col_part[std::size_t(dd) * n + j],
                              dc[dd].c1, cs.u00.data(), cs.rhs.data(), best);
            NeedPartial& pp = need[std::size_t(who)];
            loops.need(m, best, dmax, &pp.deepest, &pp.nowhere);
        });
        d = min_depth;
        nowhere = 0;
        for (const NeedPartial& pp : need) {
            d = std::max(d, int(pp.deepest));
            nowhere += pp.nowhere;
        }
    };
    pass_1();
    // An entry with lhat = 0 passes nowhere (its Lo is 0) unless it is zero by structure: ask,
    // in index order (the answer is exact, so the same on every backend and thread count), and
    // run pass 1 again with those entries passing.
    if (nowhere > 0 && zero_by_structure) {
        for (int j = 0; j < n; ++j) {
            if (b_zero(j)) continue;
            for (int i = 0; i < m; ++i)
                if (!(a_zero && a_zero[i]) && lhat[i + std::size_t(j) * ldl] == 0 && zero_by_structure(i, j))
                    structural.push_back(i + std::size_t(j) * m);
        }
        if (!structural.empty()) pass_1();
    }
    if (nowhere > 0) d = dmax;  // some entry passes nowhere: the deepest fails least
    // Pass 2, at that depth: the failing entries (an entry's bound need not shrink with d, so a
    // depth deeper than its smallest may fail it; the next depth is tried then) and the margin.
    for (;; ++d) {
        PerParticipant<MarginPartial> part(static_cast<std::size_t>(parts));
        parallel_for(threads, n, [&](int j, int who) {
            if (b_zero(j)) return;
            ColumnScratch& cs = column_halves(j, who);
            MarginPartial& pp = part[std::size_t(who)];
            loops.margin_at(m, row_part.data() + std::size_t(d) * m, col_part[std::size_t(d) * n + j], dc[d].c1,
                            cs.u00.data(), cs.rhs.data(), &pp.failing, &pp.margin);
        });
        std::int64_t failing = 0;
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
    const auto exact_zero = [&](int i, int j) {
        return (a_zero && a_zero[i]) || b_zero(j) ||
               std::binary_search(structural.begin(), structural.end(), i + std::size_t(j) * m);
    };
    if (out->failing > 0)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i)
                if (!exact_zero(i, j) && !(lhs_of(i, j, d) <= rhs_of(i, j))) out->fail_at.push_back(i + std::size_t(j) * m);
    return true;
}

}  // namespace amxblas::kernels

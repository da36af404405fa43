// The certificate of fp64_certificate.h; docs/fp64-certificate.md proves each term.
#include "kernels/certificate/fp64_certificate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/runtime/per_participant.h"
#include "kernels/runtime/thread_pool.h"
#include "kernels/isa/isa.h"

namespace amxblas::kernels {
namespace {

constexpr double kU = 0x1p-53;               // unit roundoff of FP64
constexpr double kEvalUp = 1 + 0x1p-30;      // covers the FP64 evaluation of the bound itself
constexpr int kMinSliceExp = -1000;          // kFp64MinSliceExp (kernels/isa/split.h)

int products_of(int d) { return fp64_products_of_depth(d); }

// The per-depth constants of the accumulation bound (docs/fp64-certificate.md, Section 4):
// E <= c1 * W + c2 * sum_s w_s M_s, where W is the mass of all retained products, M_s that of
// diagonal s >= 1 and w_s = s (s + 3) / 2; small[s] = c1 + c2 * w_s multiplies M_s.
struct DepthConstants {
    double c1 = 0, eta = 0;
    double small[kFp64Slices] = {};
};



}  // namespace


long fp64_repair_limit(int m, int n) {
    const long entries = long(m) * n;
    return std::min(std::max(entries / 16, 1L), (entries - 1) / 2);
}

bool Fp64BlockCertificate::begin(const Fp64SplitFacts& a, const Fp64SplitFacts& b, int k, double tol, int min_depth,
                                 int threads, int gamma_terms, StructuralTest structural) {
    a_ = a;
    b_ = b;
    structural_ = std::move(structural);
    min_depth_ = min_depth;
    const int m = a.outer, n = b.outer, dmax = std::min(a.slices, b.slices);
    dmax_ = dmax;
    const double ku = double(k) * kU;
    const double nu = double(gamma_terms > 0 ? gamma_terms : k) * kU;  // DGEMM: nu == ku
    if (ku >= 0x1p-10 || nu >= 0x1p-10 || gamma_terms < 0 || dmax < min_depth || !(tol > 0)) return false;
    const double gamma_k = nu / (1 - nu);
    const int panels = (k + 255) / 256;
    l_up_ = 1 + 2 * panels * kU;  // lhat is within (1 + u)^(panels - 1) of the exact sum
    const int dn = dmax + 1;

    // Entry bounds of the slices (alpha_p, beta_q) and the (0, 0) scale.
    double alpha[kFp64Slices] = {}, beta[kFp64Slices] = {};
    for (int p = 0; p < a.active; ++p) alpha[p] = std::ldexp(1.0, a.v[p]);
    for (int q = 0; q < b.active; ++q) beta[q] = std::ldexp(1.0, b.v[q]);
    s00_ = (a.active > 0 && b.active > 0) ? alpha[0] * beta[0] : 0;
    delta_a_ = a.active > 0 ? std::ldexp(1.0, a.v[0] - 9) * (1 + 0x1p-40) : 0;
    delta_b_ = b.active > 0 ? std::ldexp(1.0, b.v[0] - 9) * (1 + 0x1p-40) : 0;

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
        c1_[d] = dc[d].c1;
    }

    // Row parts: tau's sum over p of a_p(i) rho_B(d - p), plus the small products' mass with q >= 1.
    row_part_.assign(std::size_t(dn) * m, 0.0);
    col_part_.assign(std::size_t(dn) * n, 0.0);
    a0_.assign(std::size_t(m), 0.0);
    b0_.assign(std::size_t(n), 0.0);
    parallel_for(threads, m, [&](int i, int) {
        double ap[kFp64Slices] = {};
        for (int p = 0; p < a.active; ++p) ap[p] = a.norms[std::size_t(p) * m + i] * alpha[p];
        a0_[i] = ap[0];
        for (int d = min_depth; d <= dmax; ++d) {
            double tau = 0, small = 0;
            for (int p = 0; p < d; ++p) {
                tau += ap[p] * b.rho[d - p];
                for (int q = 1; p + q < d; ++q) small += dc[d].small[p + q] * (ap[p] * beta[q]);
            }
            row_part_[std::size_t(d) * m + i] = tau + small + dc[d].eta;
        }
    });
    parallel_for(threads, n, [&](int j, int) {
        double bq[kFp64Slices] = {};
        for (int q = 0; q < b.active; ++q) bq[q] = b.norms[std::size_t(q) * n + j] * beta[q];
        b0_[j] = bq[0];
        double bbar = double(k) * b.rho[b.slices];  // >= ||Bhat(:, j)||_1
        for (int q = 0; q < b.slices; ++q) bbar += bq[q];
        for (int d = min_depth; d <= dmax; ++d) {
            double small = 0;
            for (int p = 1; p < d; ++p) small += dc[d].small[p] * (alpha[p] * bq[0]);
            col_part_[std::size_t(d) * n + j] = a.rho[d] * bbar + small;
        }
    });
    tg_ = tol * gamma_k;
    // +inf on the exact-zero rows of op(A): their entries pass everywhere (C_ij = 0 exactly).
    row_inf_.assign(std::size_t(m), 0.0);
    if (a.zero)
        for (int i = 0; i < m; ++i) row_inf_[i] = a.zero[i] ? INFINITY : 0.0;
    // A certificate begun again (on deeper slices: kernels/bf16/bf16_engine.cc) starts over.
    deepest_ = nowhere_ = 0;
    for (int d = 0; d <= kFp64Slices; ++d) {
        failing_[d] = 0;
        margin_[d] = INFINITY;
    }
    pending_.clear();
    by_terms_.clear();
    return true;
}

// The entries (i0 .. i0 + rows - 1, j0 .. j0 + cols - 1) of lower (lhat(i0 + i, j0 + j) =
// lower[i * rs + j * cs]) in slabs of at most kSlab rows of one column, skipping the exact-zero
// columns of op(B): for each, the depth-independent halves of the test (CertLoops::halves: rhs
// and u00) with +inf in rhs for the entries zero by structure, then body(i1, rn, j, rhs, u00)
// for rows i1 .. i1 + rn - 1 of column j. An entry whose lower bound is 0 and whose spans meet
// goes to pending(at, i, j, rhs, u00) (at = i + j m), which says whether to treat it as zero by
// structure too.
template <typename PendingFn, typename Body>
void Fp64BlockCertificate::for_each_slab(int i0, int j0, int rows, int cols, const double* lower, std::size_t rs,
                                         std::size_t cs, PendingFn&& pending, Body&& body) const {
    const detail::CertLoops& loops = *isa_kernels().certificate;
    const int m = a_.outer;
    double lj[kSlab], rhs[kSlab], u00[kSlab];
    for (int jc = 0; jc < cols; ++jc) {
        const int j = j0 + jc;
        if (b_.zero && b_.zero[j]) continue;
        for (int r0 = 0; r0 < rows; r0 += kSlab) {
            const int rn = std::min(kSlab, rows - r0), i1 = i0 + r0;
            const double* col = lower + std::size_t(r0) * rs + std::size_t(jc) * cs;
            for (int i = 0; i < rn; ++i) lj[i] = col[std::size_t(i) * rs];
            loops.halves(rn, lj, a0_.data() + i1, row_inf_.data() + i1, s00_, l_up_, delta_b_, delta_a_ * b0_[j], tg_, rhs, u00);
            for (int i = 0; i < rn; ++i) {
                if (lj[i] != 0 || (a_.zero && a_.zero[i1 + i])) continue;
                const std::size_t at = std::size_t(i1 + i) + std::size_t(j) * m;
                if ((structural_.by_spans && structural_.by_spans(i1 + i, j)) || pending(at, i1 + i, j, rhs[i], u00[i]))
                    rhs[i] = INFINITY;
            }
            body(i1, rn, j, rhs, u00);
        }
    }
}

void Fp64BlockCertificate::add_block(int i0, int j0, int rows, int cols, const double* lower, std::size_t rs, std::size_t cs) {
    const detail::CertLoops& loops = *isa_kernels().certificate;
    const int m = a_.outer, n = b_.outer;
    std::int64_t best[kSlab];
    std::int64_t deepest = 0, nowhere = 0, failing[kFp64Slices + 1] = {};
    double margin[kFp64Slices + 1];
    std::fill(margin, margin + kFp64Slices + 1, INFINITY);
    std::vector<Pending> pending;
    const auto later = [&](std::size_t at, int i, int j, double r, double u) {
        // Which depths this entry passes at on its bound alone (bit d); decided in decide().
        unsigned mask = 0;
        for (int d = min_depth_; d <= dmax_; ++d) {
            const double l = (row_part_[std::size_t(d) * m + i] + col_part_[std::size_t(d) * n + j] + c1_[d] * u) * kEvalUp;
            if (l <= r) mask |= 1u << d;
        }
        pending.push_back({at, mask});
        return true;
    };
    for_each_slab(i0, j0, rows, cols, lower, rs, cs, later, [&](int i1, int rn, int j, const double* rhs, const double* u00) {
        std::fill(best, best + rn, dmax_ + 1);
        for (int d = dmax_; d >= min_depth_; --d)
            loops.pass_at(rn, d, row_part_.data() + std::size_t(d) * m + i1, col_part_[std::size_t(d) * n + j], c1_[d], u00, rhs,
                          best);
        loops.need(rn, best, dmax_, &deepest, &nowhere);
        for (int d = min_depth_; d <= dmax_; ++d)
            loops.margin_at(rn, row_part_.data() + std::size_t(d) * m + i1, col_part_[std::size_t(d) * n + j], c1_[d], u00, rhs,
                            &failing[d], &margin[d]);
    });
    std::lock_guard<std::mutex> hold(merge_);
    deepest_ = std::max(deepest_, deepest);
    nowhere_ += nowhere;
    for (int d = min_depth_; d <= dmax_; ++d) {
        failing_[d] += failing[d];
        margin_[d] = std::min(margin_[d], margin[d]);
    }
    pending_.insert(pending_.end(), pending.begin(), pending.end());
}

void Fp64BlockCertificate::decide(Fp64Certificate* out) {
    *out = Fp64Certificate{};
    // The entries left for the term-by-term test, in index order (its answers depend on the
    // order: fp64_structural_zeros.h); those it does not prove zero count with their own bound.
    std::sort(pending_.begin(), pending_.end(), [](const Pending& x, const Pending& y) { return x.at < y.at; });
    const int m = a_.outer;
    for (const Pending& p : pending_) {
        if (structural_.by_terms && structural_.by_terms(int(p.at % m), int(p.at / m))) {
            by_terms_.push_back(p.at);
            continue;
        }
        int first = 0;
        for (int d = min_depth_; d <= dmax_; ++d) {
            if (p.pass & (1u << d)) {
                if (first == 0) first = d;
            } else {
                ++failing_[d];
            }
        }
        if (first == 0) ++nowhere_;
        else deepest_ = std::max<std::int64_t>(deepest_, first);
    }
    pending_.clear();
    pending_.shrink_to_fit();
    // The smallest depth every entry that passes somewhere passes at; when some entry passes
    // nowhere, the deepest, which fails least. An entry's bound need not shrink with d, so a
    // depth deeper than its smallest may fail it: the next depth is tried then.
    int d = std::max<int>(min_depth_, int(deepest_));
    if (nowhere_ > 0) d = dmax_;
    while (failing_[d] > nowhere_ && d < dmax_) ++d;
    depth_ = d;
    out->depth = d;
    out->failing = long(failing_[d]);
    out->margin = margin_[d];
}

void Fp64BlockCertificate::failing_in(int i0, int j0, int rows, int cols, const double* lower, std::size_t rs, std::size_t cs,
                                      std::vector<std::size_t>* out) const {
    const detail::CertLoops& loops = *isa_kernels().certificate;
    const int m = a_.outer, n = b_.outer, d = depth_;
    std::int64_t best[kSlab];
    const auto proved = [&](std::size_t at, int, int, double, double) {
        return std::binary_search(by_terms_.begin(), by_terms_.end(), at);
    };
    for_each_slab(i0, j0, rows, cols, lower, rs, cs, proved, [&](int i1, int rn, int j, const double* rhs, const double* u00) {
        std::fill(best, best + rn, 0);
        loops.pass_at(rn, d, row_part_.data() + std::size_t(d) * m + i1, col_part_[std::size_t(d) * n + j], c1_[d], u00, rhs, best);
        for (int i = 0; i < rn; ++i)
            if (best[i] != d) out->push_back(std::size_t(i1 + i) + std::size_t(j) * m);
    });
}

bool fp64_certify(const Fp64SplitFacts& a, const Fp64SplitFacts& b, int k, const double* lhat, int ldl, double tol,
                  int min_depth, int threads, Fp64Certificate* out, int gamma_terms,
                  const std::function<bool(int, int)>& zero_by_structure) {
    Fp64BlockCertificate cert;
    if (!cert.begin(a, b, k, tol, min_depth, threads, gamma_terms, StructuralTest{{}, zero_by_structure})) {
        *out = Fp64Certificate{};
        return false;
    }
    const int m = a.outer, n = b.outer;
    constexpr int kCols = Fp64BlockCertificate::kSlab;
    for (int j0 = 0; j0 < n; j0 += kCols) cert.add_block(0, j0, m, std::min(kCols, n - j0), lhat + std::size_t(j0) * ldl, 1, ldl);
    cert.decide(out);
    if (out->failing > 0)
        for (int j0 = 0; j0 < n; j0 += kCols)
            cert.failing_in(0, j0, m, std::min(kCols, n - j0), lhat + std::size_t(j0) * ldl, 1, ldl, &out->fail_at);
    return true;
}

}  // namespace amxblas::kernels

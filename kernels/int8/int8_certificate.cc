#include "kernels/int8/int8_certificate.h"

#include <algorithm>
#include <vector>
#include <cmath>
#include <limits>

#include "kernels/int8/int8_pack.h"
#include "kernels/isa/isa.h"

namespace amxblas::kernels {
namespace {

constexpr double kU = 0x1p-53;
constexpr double kEvalUp = 1 + 0x1p-30;

// body(i, j, lhat) for the block's entries, column by column.
template <typename Body>
void for_each_entry(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld, Body&& body) {
    for (int jj = 0; jj < cols; ++jj)
        for (int ii = 0; ii < rows; ++ii) body(i0 + ii, j0 + jj, lower[ii * ld + jj]);
}

}  // namespace

bool Int8BlockCertificate::begin(const Int8OperandFacts& a, const Int8OperandFacts& b, int gamma_terms, double tol,
                                 int min_count, StructuralTest structural, int max_count, bool prune) {
    a_ = &a;
    b_ = &b;
    structural_ = std::move(structural);
    k_ = a.depth;
    const double nu = double(gamma_terms) * kU;
    const double gamma = nu / (1 - nu);
    rhs_factor_ = (tol * gamma - kU) * 0x1p-14 * (1 - 0x1p-30);
    exact_passes_ = tol * gamma >= kU;
    prune_ = prune;
    tight_factor_ = kU * 0x1p-14 * (1 - 0x1p-30);
    min_count_ = 0;
    for (int c = std::max(min_count, kInt8MinModuli); c <= std::min(max_count, kInt8MaxModuli); ++c) {
        Int8Halves h;
        if (!int8_halves(crt_basis(c), k_, &h)) continue;
        if (!min_count_) min_count_ = c;
        max_count_ = c;
        half_a_[c] = h.a;
        half_b_[c] = h.b;
        pow_a_[c] = std::ldexp(1.0, -h.a);
        pow_b_[c] = std::ldexp(1.0, -h.b);
        pow_ab_[c] = pow_a_[c] * pow_b_[c];
        margin_[c] = std::numeric_limits<double>::infinity();
    }
    // Per row (column) o, with s_o = h - 1 - e_o - nu_o: F (some entry not an integer once
    // scaled) is s_o + lsb_o < 0, i.e. h < 1 + e_o + nu_o - lsb_o; and 2^-(s_o + e_o) = 2 2^nu_o 2^-h,
    // whose 2 the halves of Section 4's T absorb.
    const auto rows = [](const Int8OperandFacts& f, std::vector<Row>* out) {
        out->resize(f.outer);
        for (int o = 0; o < f.outer; ++o) {
            Row& r = (*out)[o];
            r.thr = f.lsb[o] == kLsbNone ? -(1 << 20) : 1 + f.e[o] + f.nu[o] - f.lsb[o];
            r.pow_nu = std::ldexp(1.0, f.nu[o]);
            r.n1 = f.n1[o];
            r.e = f.e[o];
            r.g = f.e[o] + f.nu[o];
        }
    };
    rows(a, &row_a_);
    rows(b, &row_b_);
    // The columns once more, as arrays, for add_block's loops over a block row.
    col_thr_.resize(b.outer);
    col_pow_nu_.resize(b.outer);
    col_n1_.resize(b.outer);
    for (int o = 0; o < b.outer; ++o) {
        col_thr_[o] = row_b_[o].thr;
        col_pow_nu_[o] = row_b_[o].pow_nu;
        col_n1_[o] = row_b_[o].n1;
    }
    return min_count_ != 0;
}

unsigned Int8BlockCertificate::passes(int i, int j, double lhat, double* margin, unsigned* tight) const {
    unsigned bits = 0;
    *tight = 0;
    const double rhs = rhs_factor_ * lhat;
    const EntryBound t = entry_bound(i, j);
    for (int c = min_count_; c <= max_count_; ++c) {
        const double lhs = t.lhs(*this, c);
        const bool ok = lhs == 0 ? exact_passes_ : lhs <= rhs;
        bits |= unsigned(ok) << c;
        *tight |= unsigned(ok && lhs <= tight_factor_ * lhat) << c;
        // The margin rhs / lhs, divided only where it may lower the running minimum: fl(rhs / lhs)
        // < margin[c] implies rhs < margin[c] lhs, which the slack keeps true once rounded.
        if (ok && margin && lhs != 0 && rhs < margin[c] * lhs * (1 + 0x1p-40))
            margin[c] = std::min(margin[c], rhs / lhs);
    }
    return bits;
}

Int8BlockCertificate::EntryBound Int8BlockCertificate::entry_bound(int i, int j) const {
    const Row& ra = row_a_[i];
    const Row& rb = row_b_[j];
    EntryBound t;
    t.thr_a = ra.thr;
    t.thr_b = rb.thr;
    // T in units of 2^(e_i + f_j) (docs/fp64-int8.md, Section 4), its count-free factors first:
    // every product is of powers of two and one exact value, so exact in any order.
    t.x = ra.pow_nu * rb.n1, t.y = rb.pow_nu * ra.n1, t.z = double(k_) * ra.pow_nu * rb.pow_nu;
    // A result scaled by 2^-(s + t) below 2^-1022 may round once more, by 2^-1075 at most: at
    // the counts whose halves add up to more than 1076 + g_i + g_j (the largest count first).
    t.eta_above = 1076 + ra.g + rb.g;
    t.eta = half_a_[max_count_] + half_b_[max_count_] > t.eta_above ? std::ldexp(1.0, -1075 - ra.e - rb.e) : 0;
    return t;
}

double Int8BlockCertificate::EntryBound::lhs(const Int8BlockCertificate& cert, int c) const {
    // The flags F are "h < thr".
    const bool fa = cert.half_a_[c] < thr_a, fb = cert.half_b_[c] < thr_b;
    double v = 0;
    if (fa) v += cert.pow_a_[c] * x;
    if (fb) v += cert.pow_b_[c] * y;
    if (fa && fb) v += cert.pow_ab_[c] * z;
    if (cert.half_a_[c] + cert.half_b_[c] > eta_above) v += eta;
    return v * ((1 + kU) * kEvalUp);
}

bool Int8BlockCertificate::fails_at_every_count(int i, int j, double upper) const {
    // passes()'s test, from the most moduli down: an entry that passes anywhere usually passes
    // there, and the first count it passes at ends the loop. Without the underflow term the
    // largest count decides alone: the halves grow with the count (test_moduli_coprime_and_
    // ranges), so each of lhs's terms, 2^-h times a nonnegative count-free factor under a flag
    // "h < thr", shrinks or vanishes, and their rounded sum and product cannot grow.
    const double rhs = rhs_factor_ * (upper * 0x1p14);
    const EntryBound t = entry_bound(i, j);
    const int lowest = t.eta == 0 ? max_count_ : min_count_;
    for (int c = max_count_; c >= lowest; --c) {
        const double lhs = t.lhs(*this, c);
        if (lhs == 0 ? exact_passes_ : lhs <= rhs) return false;
    }
    return true;
}

// One entry as passes() sees it, with the structural-zero tests where lhat = 0: the counts
// it fails at and those it passes at without being tight.
void Int8BlockCertificate::count_entry(int i, int j, double lhat, BlockTally* t) const {
    unsigned tight;
    unsigned bits = passes(i, j, lhat, t->margin, &tight);
    if (bits == 0 && lhat == 0 && structural_.by_spans && structural_.by_spans(i, j)) bits = tight = ~0u;
    if (bits == 0 && lhat == 0 && structural_.by_terms) {
        t->pending.push_back(i + j * std::size_t(a_->outer));
        // Counted as failing now; decide() takes back those proved zero.
    }
    for (int c = min_count_; c <= max_count_; ++c) {
        t->failing[c] += !(bits >> c & 1);
        t->loose[c] += (bits & ~tight) >> c & 1;
    }
}

// Row by row, count by count, the block row's entries at once: passes()'s arithmetic in the
// same order (so the same bits), written so that the loop over the columns vectorizes. Entries
// with lhat = 0, and a row's entries in a chunk of 256 columns where the underflow term may
// enter for one of them, go through count_entry instead.
void Int8BlockCertificate::add_block(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld) {
    BlockTally t;
    std::fill(t.margin, t.margin + kInt8MaxModuli + 1, std::numeric_limits<double>::infinity());
    constexpr int kCols = 256;
    alignas(64) double thr[kCols];  // the columns' thr, as doubles: one lane width in the loop
    const double kd = double(k_);
    const detail::Int8ResidueLoops& row_loops = *isa_kernels().int8_residues;
    for (int jc = 0; jc < cols; jc += kCols) {
        const int nc = std::min(kCols, cols - jc), jb = j0 + jc;
        double max_thr = -std::numeric_limits<double>::infinity();
        int min_g = std::numeric_limits<int>::max();
        for (int jj = 0; jj < nc; ++jj) {
            thr[jj] = col_thr_[jb + jj];
            max_thr = std::max(max_thr, thr[jj]);
            min_g = std::min(min_g, row_b_[jb + jj].g);
        }
        for (int ii = 0; ii < rows; ++ii) {
            const int i = i0 + ii;
            const Row& ra = row_a_[i];
            const double* lhat = lower + std::size_t(ii) * ld + jc;
            if (half_a_[max_count_] + half_b_[max_count_] > 1076 + ra.g + min_g) {
                for (int jj = 0; jj < nc; ++jj) count_entry(i, jb + jj, lhat[jj], &t);
                continue;
            }
            const double knu = kd * ra.pow_nu;
            const double* n1b = col_n1_.data() + jb;
            const double* nub = col_pow_nu_.data() + jb;
            long counted = -1;  // the row's entries with lhat != 0 (row_counts counts them)
            // From the most moduli down: lhs only grows as the count drops (flags turn on,
            // halves shrink), so once every entry fails, every entry fails below too (when an
            // lhs of 0 passes, which is what makes failing monotone).
            for (int c = max_count_; c >= min_count_; --c) {
                if (prune_ && bad_[c].load(std::memory_order_relaxed)) continue;
                // passes()'s terms, a flag off as a factor 0 (the terms are finite): 0 v = 0 and
                // 1 v = v exactly; each term is one value times powers of two, so exact in any
                // order: lhs is passes()'s to the bit.
                const bool fa = half_a_[c] < ra.thr;
                const double hb = half_b_[c], pa = fa ? pow_a_[c] : 0.0, pb = pow_b_[c];
                if (!fa && hb >= max_thr) {  // every flag off: lhs = 0 throughout, no margin
                    if (exact_passes_) continue;
                    if (counted < 0) counted = long(std::count_if(lhat, lhat + nc, [](double v) { return v != 0; }));
                    t.failing[c] += counted;
                    continue;
                }
                const double pab = fa ? pow_ab_[c] : 0.0;
                const double pax = pa * ra.pow_nu, pby = pb * ra.n1, pabz = pab * knu;
                // The vectorized test of the row at this count (this instruction set's build,
                // int8_certificate_row.inc); lower_margin may flag more than the entries that
                // lower a margin (the recheck below decides).
                const detail::Int8RowTest row{n1b, nub, thr, lhat, rhs_factor_, tight_factor_, hb, pax, pby, pabz,
                                              t.margin[c] * (1 + 0x1p-40), exact_passes_};
                detail::Int8RowCounts r;
                row_loops.row_counts(nc, row, &r);
                counted = long(r.counted);
                t.failing[c] += std::int64_t(r.failing);
                t.loose[c] += std::int64_t(r.loose);
                // Only this test marks a count bad: count_entry's failures may be pending ones
                // that resolve_pending() takes back.
                if (prune_ && (r.failing != 0 || r.loose != 0)) bad_[c].store(true, std::memory_order_relaxed);
                if (exact_passes_ && r.failing == r.counted) {
                    for (int below = min_count_; below < c; ++below) t.failing[below] += counted;
                    break;
                }
                if (r.lower_margin != 0)  // rare once the minimum has settled: passes()'s division
                    for (int jj = 0; jj < nc; ++jj) {
                        if (lhat[jj] == 0) continue;
                        const double fb = hb < thr[jj] ? 1.0 : 0.0, rhs = rhs_factor_ * lhat[jj];
                        const double lhs = ((pax * n1b[jj] + fb * (pby * nub[jj])) + fb * (pabz * nub[jj])) *
                                           ((1 + kU) * kEvalUp);
                        if (lhs != 0 && lhs <= rhs && rhs < t.margin[c] * lhs * (1 + 0x1p-40))
                            t.margin[c] = std::min(t.margin[c], rhs / lhs);
                    }
            }
            if (counted < 0) counted = long(std::count_if(lhat, lhat + nc, [](double v) { return v != 0; }));
            if (counted < nc)
                for (int jj = 0; jj < nc; ++jj)
                    if (lhat[jj] == 0) count_entry(i, jb + jj, 0.0, &t);
        }
    }
    merge(t);
}

void Int8BlockCertificate::add_block_per_entry(int i0, int j0, int rows, int cols, const double* lower,
                                               std::size_t ld) {
    BlockTally t;
    std::fill(t.margin, t.margin + kInt8MaxModuli + 1, std::numeric_limits<double>::infinity());
    for_each_entry(i0, j0, rows, cols, lower, ld, [&](int i, int j, double lhat) { count_entry(i, j, lhat, &t); });
    merge(t);
}

void Int8BlockCertificate::merge(const BlockTally& t) {
    std::lock_guard<std::mutex> lock(merge_);
    for (int c = min_count_; c <= max_count_; ++c) {
        failing_[c] += t.failing[c];
        loose_[c] += t.loose[c];
        margin_[c] = std::min(margin_[c], t.margin[c]);
    }
    pending_.insert(pending_.end(), t.pending.begin(), t.pending.end());
}

void Int8BlockCertificate::resolve_pending() {
    if (pending_resolved_) return;
    pending_resolved_ = true;
    // The term-by-term test in index order (its budget makes the answers depend on it).
    std::sort(pending_.begin(), pending_.end());
    const std::size_t m = std::size_t(a_->outer);
    by_terms_.clear();
    for (std::size_t at : pending_)
        if (structural_.by_terms(int(at % m), int(at / m))) by_terms_.push_back(at);
    for (int c = min_count_; c <= max_count_; ++c) failing_[c] -= std::int64_t(by_terms_.size());
}

void Int8BlockCertificate::decide(Int8Decision* out) {
    resolve_pending();
    if (prune_) {
        // Below count_ every count fails some entry, and from count_ to the count picked every
        // count leaves some entry loose: the pick is the first count with neither, whose
        // tallies no block skipped.
        count_ = max_count_;
        for (int c = min_count_; c <= max_count_; ++c)
            if (failing_[c] == 0 && loose_[c] == 0) {
                count_ = c;
                break;
            }
        out->count = count_;
        out->failing = long(failing_[count_]);
        out->margin = margin_[count_];
        out->first_clean = 0;
        return;
    }
    // The fewest moduli with the fewest failures (the failures only shrink as the count grows).
    count_ = min_count_;
    for (int c = min_count_; c <= max_count_; ++c)
        if (failing_[c] < failing_[count_]) count_ = c;
    // Then the fewest moduli, if any, at which every certified entry is also tight. (An entry
    // proved zero by its terms is exact: tight at every count.)
    for (int c = count_; c <= max_count_; ++c)
        if (loose_[c] == 0 || c == max_count_) {
            count_ = c;
            break;
        }
    out->count = count_;
    out->failing = long(failing_[count_]);
    out->first_clean = 0;
    for (int c = min_count_; c <= max_count_ && exact_passes_; ++c)
        if (failing_[c] == 0) {
            out->first_clean = c;
            break;
        }
    out->margin = margin_[count_];
}

bool Int8BlockCertificate::settled() {
    resolve_pending();
    return exact_passes_ && failing_[max_count_] == 0 && loose_[max_count_] == 0;
}

long Int8BlockCertificate::failing_everywhere() {
    resolve_pending();
    // An entry failing at every count fails at the largest; the count there may also hold
    // entries that pass below it (the underflow term), which the listing sorts out.
    return long(failing_[max_count_]);
}

unsigned Int8BlockCertificate::bits_of(int i, int j, double lhat, unsigned* tight) const {
    const std::size_t at = i + j * std::size_t(a_->outer);
    const auto r = std::lower_bound(retested_.begin(), retested_.end(), Retested{at, 0, 0});
    if (r != retested_.end() && r->at == at) {
        *tight = r->tight;
        return r->bits;
    }
    unsigned bits = passes(i, j, lhat, nullptr, tight);
    if (bits == 0 && lhat == 0 && structural_.by_spans && structural_.by_spans(i, j)) bits = *tight = ~0u;
    if (bits == 0 && lhat == 0 && std::binary_search(by_terms_.begin(), by_terms_.end(), at)) bits = *tight = ~0u;
    return bits;
}

void Int8BlockCertificate::failing_everywhere_in(int i0, int j0, int rows, int cols, const double* lower,
                                                 std::size_t ld, std::vector<std::size_t>* out) const {
    const std::size_t m = std::size_t(a_->outer);
    for_each_entry(i0, j0, rows, cols, lower, ld, [&](int i, int j, double lhat) {
        unsigned tight;
        if (bits_of(i, j, lhat, &tight) == 0) out->push_back(i + j * m);
    });
}

void Int8BlockCertificate::retest(const std::vector<std::size_t>& at, const std::vector<double>& lower) {
    const std::size_t m = std::size_t(a_->outer);
    for (std::size_t q = 0; q < at.size(); ++q) {
        const int i = int(at[q] % m), j = int(at[q] / m);
        double margin[kInt8MaxModuli + 1];
        std::fill(margin, margin + kInt8MaxModuli + 1, std::numeric_limits<double>::infinity());
        unsigned tight;
        const unsigned bits = passes(i, j, lower[q] * 0x1p14, margin, &tight);
        // It was counted failing at every count and loose at none: now as these bits say.
        for (int c = min_count_; c <= max_count_; ++c) {
            failing_[c] -= bits >> c & 1;
            loose_[c] += (bits & ~tight) >> c & 1;
            margin_[c] = std::min(margin_[c], margin[c]);
        }
        retested_.push_back({at[q], bits, tight});
    }
    std::sort(retested_.begin(), retested_.end());
}

void Int8BlockCertificate::failing_in(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld,
                                      std::vector<std::size_t>* out) const {
    const std::size_t m = std::size_t(a_->outer);
    for_each_entry(i0, j0, rows, cols, lower, ld, [&](int i, int j, double lhat) {
        unsigned tight;
        if (!(bits_of(i, j, lhat, &tight) >> count_ & 1)) out->push_back(i + j * m);
    });
}

}  // namespace amxblas::kernels

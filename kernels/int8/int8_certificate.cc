#include "kernels/int8/int8_certificate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/int8/int8_pack.h"

namespace amxblas::kernels {
namespace {

constexpr double kU = 0x1p-53;
constexpr double kEvalUp = 1 + 0x1p-30;

}  // namespace

bool Int8BlockCertificate::begin(const Int8OperandFacts& a, const Int8OperandFacts& b, int gamma_terms, double tol,
                                 int min_count, StructuralTest structural) {
    a_ = &a;
    b_ = &b;
    structural_ = std::move(structural);
    k_ = a.depth;
    const double nu = double(gamma_terms) * kU;
    const double gamma = nu / (1 - nu);
    rhs_factor_ = (tol * gamma - kU) * 0x1p-14 * (1 - 0x1p-30);
    exact_passes_ = tol * gamma >= kU;
    tight_factor_ = kU * 0x1p-14 * (1 - 0x1p-30);
    min_count_ = 0;
    for (int c = std::max(min_count, kInt8MinModuli); c <= kInt8MaxModuli; ++c) {
        Int8Halves h;
        if (!int8_halves(crt_basis(c), k_, &h)) continue;
        if (!min_count_) min_count_ = c;
        max_count_ = c;
        half_a_[c] = h.a;
        half_b_[c] = h.b;
        margin_[c] = std::numeric_limits<double>::infinity();
    }
    return min_count_ != 0;
}

unsigned Int8BlockCertificate::passes(int i, int j, double lhat, double* margin_at, unsigned* tight) const {
    const Int8OperandFacts &a = *a_, &b = *b_;
    unsigned bits = 0;
    *tight = 0;
    const double rhs = rhs_factor_ * lhat;
    for (int c = min_count_; c <= max_count_; ++c) {
        const int ha = half_a_[c], hb = half_b_[c];
        const int s = int8_shift(a, i, ha), t = int8_shift(b, j, hb);
        const bool fa = s + a.lsb[i] < 0, fb = t + b.lsb[j] < 0;
        double lhs = 0;
        if (fa) lhs += std::ldexp(b.n1[j], a.nu[i] - ha);
        if (fb) lhs += std::ldexp(a.n1[i], b.nu[j] - hb);
        if (fa && fb) lhs += std::ldexp(double(k_), a.nu[i] + b.nu[j] - ha - hb);
        // A result scaled by 2^-(s + t) below 2^-1022 may round once more, by 2^-1075 at most.
        if (s + t > 1074) lhs += std::ldexp(1.0, -1075 - a.e[i] - b.e[j]);
        lhs *= (1 + kU) * kEvalUp;
        bool ok;
        if (lhs == 0) {
            ok = exact_passes_;
            margin_at[c] = std::numeric_limits<double>::infinity();
        } else {
            ok = lhs <= rhs;
            margin_at[c] = rhs / lhs;
        }
        bits |= unsigned(ok) << c;
        *tight |= unsigned(ok && lhs <= tight_factor_ * lhat) << c;
    }
    return bits;
}

void Int8BlockCertificate::add_block(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld) {
    std::int64_t failing[kInt8MaxModuli + 1] = {}, loose[kInt8MaxModuli + 1] = {};
    double margin[kInt8MaxModuli + 1];
    std::fill(margin, margin + kInt8MaxModuli + 1, std::numeric_limits<double>::infinity());
    std::vector<std::size_t> pending;
    const std::size_t m = std::size_t(a_->outer);
    double at_count[kInt8MaxModuli + 1];
    for (int jj = 0; jj < cols; ++jj)
        for (int ii = 0; ii < rows; ++ii) {
            const int i = i0 + ii, j = j0 + jj;
            const double lhat = lower[ii * ld + jj];
            unsigned tight;
            unsigned bits = passes(i, j, lhat, at_count, &tight);
            if (bits == 0 && lhat == 0 && structural_.by_spans && structural_.by_spans(i, j)) bits = tight = ~0u;
            if (bits == 0 && lhat == 0 && structural_.by_terms) {
                pending.push_back(i + j * m);
                // Counted as failing now; decide() takes back those proved zero.
            }
            for (int c = min_count_; c <= max_count_; ++c) {
                if (bits >> c & 1) {
                    if (bits != ~0u) margin[c] = std::min(margin[c], at_count[c]);
                    loose[c] += !(tight >> c & 1);
                } else {
                    ++failing[c];
                }
            }
        }
    std::lock_guard<std::mutex> lock(merge_);
    for (int c = min_count_; c <= max_count_; ++c) {
        failing_[c] += failing[c];
        loose_[c] += loose[c];
        margin_[c] = std::min(margin_[c], margin[c]);
    }
    pending_.insert(pending_.end(), pending.begin(), pending.end());
}

void Int8BlockCertificate::decide(Int8Decision* out) {
    // The term-by-term test in index order (its budget makes the answers depend on it).
    std::sort(pending_.begin(), pending_.end());
    const std::size_t m = std::size_t(a_->outer);
    by_terms_.clear();
    for (std::size_t at : pending_)
        if (structural_.by_terms(int(at % m), int(at / m))) by_terms_.push_back(at);
    for (int c = min_count_; c <= max_count_; ++c) failing_[c] -= std::int64_t(by_terms_.size());
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
    out->margin = margin_[count_];
}

void Int8BlockCertificate::failing_in(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld,
                                      std::vector<std::size_t>* out) const {
    const std::size_t m = std::size_t(a_->outer);
    double at_count[kInt8MaxModuli + 1];
    for (int jj = 0; jj < cols; ++jj)
        for (int ii = 0; ii < rows; ++ii) {
            const int i = i0 + ii, j = j0 + jj;
            const double lhat = lower[ii * ld + jj];
            unsigned tight;
            if (passes(i, j, lhat, at_count, &tight) >> count_ & 1) continue;
            const std::size_t at = i + j * m;
            if (lhat == 0 && structural_.by_spans && structural_.by_spans(i, j)) continue;
            if (lhat == 0 && std::binary_search(by_terms_.begin(), by_terms_.end(), at)) continue;
            out->push_back(at);
        }
}

}  // namespace amxblas::kernels

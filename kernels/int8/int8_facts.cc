#include "kernels/int8/int8_facts.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/common/reasons.h"
#include "kernels/isa/int8_residue_loops.h"
#include "kernels/isa/isa.h"
#include "kernels/pack/fp64_exponents.h"
#include "kernels/pack/operand_element.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

// facts_take, for the generic path below (the real path runs this instruction set's build of
// the same loops: isa_kernels().int8_residues).
#include "kernels/isa/int8_facts_loops.inc"

namespace {

// Rows (columns) per task. Stored along K, 32: a cache line of each of 32 streams. Stored
// across K (consecutive rows adjacent), up to kGroup, so that each K index reads a long run
// rather than 256 bytes per page; at least four tasks a thread where the operand allows.
constexpr int kGroup = 256;
constexpr int kStreamGroup = 32;

int group_size(bool outer_contiguous, int outer, int threads) {
    if (!outer_contiguous) return kStreamGroup;
    const int per_task = (outer + 4 * threads - 1) / (4 * threads);
    return std::max(kStreamGroup, std::min(kGroup, (per_task + kStreamGroup - 1) / kStreamGroup * kStreamGroup));
}

// The exponent of the lowest set bit of a finite nonzero x.
int lowest_bit_exponent(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    const int biased = int((u >> 52) & 0x7FF);
    const std::uint64_t frac = u & ((std::uint64_t(1) << 52) - 1);
    if (biased == 0) return -1074 + __builtin_ctzll(frac);  // subnormal
    return biased - 1075 + __builtin_ctzll(frac | (std::uint64_t(1) << 52));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// each(o, l) over the group's entries, in the order of their storage: along o when the rows
// (columns) are contiguous in memory, else one row (column) after the other.
template <typename Each>
void in_storage_order(bool outer_contiguous, int o0, int o1, int depth, Each&& each) {
    if (outer_contiguous) {
        for (int l = 0; l < depth; ++l)
            for (int o = o0; o < o1; ++o) each(o, l);
    } else {
        for (int o = o0; o < o1; ++o)
            for (int l = 0; l < depth; ++l) each(o, l);
    }
}

// Where a group's facts come from: a real view's storage (x, ld: the loops above), or a
// complex view's magnitudes copied chunk by chunk into rows along K (complex below), or any view
// through at(o, l) (real groups with a row scaled below 2^-1022, and complex ones then).
struct GroupSource {
    const double* x = nullptr;  // null: read through at(o, l)
    std::size_t ld = 0;
    const OperandView<double>* complex = nullptr;  // a complex view: A' by rows, B' by columns
};

// A chunk of a complex view's magnitudes: |op(X')(o, l)| for the lines o in o0 .. o0 + count - 1
// (A' rows, B' columns: complex_line) and l in c0 .. c0 + w - 1, at buf[(o - o0) w + l - c0],
// so that the facts loops see each line's values in its K order, as element() gives them.
void complex_magnitudes(const OperandView<double>& x, int o0, int count, int c0, int w, double* buf) {
    for (int r = 0; r < count; ++r) {
        const ComplexLine<double> line = complex_line(x, o0 + r);
        double* row = buf + std::size_t(r) * w;
        for (int l = c0; l < c0 + w; ++l) row[l - c0] = std::fabs(line.stored(l));
    }
}

// A complex group's chunk of magnitudes: at most kStreamGroup rows (int8_operand_facts) of 64
// K values, 16 KiB in the frame of the two passes below, not in group_facts'.
constexpr int kChunkValues = 2048;
constexpr int kChunkWidth = kChunkValues / kStreamGroup;

// The extremes of a complex group's rows, chunk by chunk, folded (maxima and minima: any order).
[[gnu::noinline]] void complex_extremes(const GroupSource& src, int o0, int count, int depth, double* mx, double* low,
                                        double* finite) {
    const detail::Int8ResidueLoops& loops = *isa_kernels().int8_residues;
    alignas(64) double chunk[kChunkValues];
    double cmx[kStreamGroup], clow[kStreamGroup], cfin[kStreamGroup];
    for (int i = 0; i < count; ++i) mx[i] = 0, low[i] = kInf, finite[i] = 1;
    for (int c0 = 0; c0 < depth; c0 += kChunkWidth) {
        const int w = std::min(kChunkWidth, depth - c0);
        complex_magnitudes(*src.complex, o0, count, c0, w, chunk);
        loops.extremes(chunk, std::size_t(w), false, 0, count, w, cmx, clow, cfin);
        for (int i = 0; i < count; ++i) {
            mx[i] = cmx[i] > mx[i] ? cmx[i] : mx[i];
            low[i] = clow[i] < low[i] ? clow[i] : low[i];
            finite[i] = cfin[i] < finite[i] ? cfin[i] : finite[i];
        }
    }
}

// The scaled sums of a complex group's rows: each row's go on from chunk to chunk, in K order.
[[gnu::noinline]] void complex_scaled_sums(const GroupSource& src, int o0, int count, int depth, const double* scale,
                                           double* s1, double* s2) {
    const detail::Int8ResidueLoops& loops = *isa_kernels().int8_residues;
    alignas(64) double chunk[kChunkValues];
    for (int c0 = 0; c0 < depth; c0 += kChunkWidth) {
        const int w = std::min(kChunkWidth, depth - c0);
        complex_magnitudes(*src.complex, o0, count, c0, w, chunk);
        loops.scaled_sums(chunk, std::size_t(w), false, 0, count, w, scale, s1, s2);
    }
}

// One task's rows (columns) o0 .. o1 - 1, their entries read by at(o, l). Each row's sums run
// in K order whatever the storage order. False where an entry is Inf or NaN.
template <typename At>
bool group_facts(const At& at, GroupSource real, bool outer_contiguous, int o0, int o1, int depth,
                 Int8OperandFacts* out, bool* seen) {
    const int count = o1 - o0;
    double mx[kGroup], low[kGroup], finite[kGroup], s1[kGroup], s2[kGroup], least[kGroup];
    const detail::Int8ResidueLoops& loops = *isa_kernels().int8_residues;
    // Rows contiguous in memory are read once: their sums are taken unscaled along the
    // extremes (into s1 and s2), and scaled below where that gives the same bits.
    const bool one_read = real.x && outer_contiguous;
    if (one_read) {
        loops.extremes_and_sums(real.x, real.ld, o0, count, depth, mx, low, finite, least, s1, s2);
    } else if (real.x) {
        loops.extremes(real.x, real.ld, outer_contiguous, o0, count, depth, mx, low, finite);
    } else if (real.complex) {
        complex_extremes(real, o0, count, depth, mx, low, finite);
    } else {
        for (int i = 0; i < count; ++i) mx[i] = 0, low[i] = kInf, finite[i] = 1;
        in_storage_order(outer_contiguous, o0, o1, depth, [&](int o, int l) {
            facts_take(std::fabs(at(o, l)), &mx[o - o0], &low[o - o0], &finite[o - o0]);
        });
    }
    for (int i = 0; i < count; ++i)
        if (finite[i] == 0) return false;  // Inf or NaN
    double scale[kGroup];
    bool tiny = false;
    for (int o = o0; o < o1; ++o) {
        const int e = mx[o - o0] != 0 ? ceil_log2(mx[o - o0]) : 0;
        out->e[o] = e;
        scale[o - o0] = std::ldexp(1.0, -e);  // below 2^1024: e >= -1074
        tiny = tiny || e < -1022;
    }
    bool unscaled_exact = one_read && !tiny;
    for (int i = 0; i < count && unscaled_exact; ++i)
        unscaled_exact = int8_unscaled_sums_exact(mx[i], least[i], out->e[o0 + i]);
    if (unscaled_exact) {
        for (int i = 0; i < count; ++i) {
            s1[i] *= scale[i];
            s2[i] = s2[i] * scale[i] * scale[i];
        }
    } else {
        // Scaled by 2^-e every value is in [-1, 1] (std::ldexp where 2^-e itself would overflow).
        for (int i = 0; i < count; ++i) s1[i] = 0, s2[i] = 0;
        if (real.x && !tiny) {
            loops.scaled_sums(real.x, real.ld, outer_contiguous, o0, count, depth, scale, s1, s2);
        } else if (real.complex && !tiny) {
            complex_scaled_sums(real, o0, count, depth, scale, s1, s2);
        } else {
            int exps[kGroup];
            for (int o = o0; o < o1; ++o) exps[o - o0] = out->e[o];
            in_storage_order(outer_contiguous, o0, o1, depth, [&](int o, int l) {
                const int e = exps[o - o0];
                const double v = e >= -1022 ? std::fabs(at(o, l)) * scale[o - o0] : std::ldexp(std::fabs(at(o, l)), -e);
                s1[o - o0] += v;
                s2[o - o0] += v * v;
            });
        }
    }
    for (int o = o0; o < o1; ++o) {
        const int i = o - o0;
        out->zero[o] = mx[i] == 0;
        out->lsb[o] = low[i] == kInf ? kLsbNone : lowest_bit_exponent(low[i]);
        *seen = *seen || mx[i] != 0;
        if (mx[i] == 0) continue;
        // Upper bounds: K roundings of terms in [0, 1] (relative 2^-53 each, and 2^-1074
        // absolute where a square underflows), far inside the factors below for any K < 2^31.
        out->n1[o] = s1[i] * (1 + 0x1p-20) + 0x1p-900;
        const double n2 = std::sqrt(s2[i] * (1 + 0x1p-20) + 0x1p-900) * (1 + 0x1p-50);
        out->nu[o] = ceil_log2(n2);  // n2 > 1/2 (the largest entry is above 1/2 scaled)
    }
    return true;
}

}  // namespace

// Scaling by a power of two commutes with a rounding to nearest as long as the operands and
// the result stay in the normal range (or are 0): then the sums of |x| and x^2, taken in K order
// unscaled and multiplied by 2^-e (twice for the squares), are the sums of |x| 2^-e and its
// squares to the bit. That holds when every nonzero |x| is at least 2^-511 and 2^(e - 511) (so
// x^2 and (|x| 2^-e)^2 are normal, and so is every partial sum of these nonnegative terms, at
// least its largest term) and the largest at most 2^480 (so K < 2^31 squares sum below 2^991);
// the final products by 2^-e are then normal too. A sufficient condition, chosen for its short
// proof: a row spread over more than 2^511 takes the scaled second read.
bool int8_unscaled_sums_exact(double mx, double least, int e) {
    return mx <= 0x1p480 && least >= 0x1p-511 && least >= std::ldexp(1.0, e - 511);
}

const char* int8_operand_facts(const OperandView<double>& x, bool as_rows, int threads, Int8OperandFacts* out) {
    const int outer = as_rows ? x.rows : x.cols, depth = as_rows ? x.cols : x.rows;
    out->outer = outer;
    out->depth = depth;
    out->e.assign(outer, 0);
    out->nu.assign(outer, 0);
    out->n1.assign(outer, 0.0);
    out->lsb.assign(outer, kLsbNone);
    out->zero.assign(outer, 1);
    std::atomic<bool> bad{false}, any{false};
    // A real view is read through its strides: the row (column) o and K index l of op(X) at
    // o so + l sl; any other through element().
    const bool outer_contiguous = as_rows ? x.trans == 'N' : x.trans != 'N';
    const std::size_t ld = std::size_t(x.ld), so = outer_contiguous ? 1 : ld, sl = outer_contiguous ? ld : 1;
    // Complex groups take kStreamGroup rows whatever their storage (complex_extremes' chunks);
    // A' is read by rows and B' by columns, as complex_magnitudes reads them.
    const bool complex_by_chunks = (x.kind == Interleave::complex_a) == as_rows;
    const int group = x.kind == Interleave::real ? group_size(outer_contiguous, outer, threads) : kStreamGroup;
    parallel_for(threads, (outer + group - 1) / group, [&](int grp, int) {
        const int o0 = grp * group, o1 = std::min(outer, o0 + group);
        bool seen = false, ok;
        if (x.kind == Interleave::real)
            ok = group_facts([&](int o, int l) { return x.x[o * so + l * sl]; }, GroupSource{x.x, ld},
                             outer_contiguous, o0, o1, depth, out, &seen);
        else  // complex views: two values per stored entry, the same order as a real one's
            ok = group_facts([&](int o, int l) { return as_rows ? element(x, o, l) : element(x, l, o); },
                             GroupSource{nullptr, 0, complex_by_chunks ? &x : nullptr}, outer_contiguous,
                             o0, o1, depth, out, &seen);
        if (!ok) bad = true;
        if (seen) any = true;
    });
    if (bad) return reason::domain_nonfinite;
    out->any_nonzero = any;
    return nullptr;
}

}  // namespace amxblas::kernels

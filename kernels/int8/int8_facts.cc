#include "kernels/int8/int8_facts.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/common/reasons.h"
#include "kernels/pack/fp64_exponents.h"
#include "kernels/pack/operand_element.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

constexpr int kGroup = 32;  // rows (columns) per task: a cache line of each of 32 streams

// The exponent of the lowest set bit of a finite nonzero x.
int lowest_bit_exponent(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    const int biased = int((u >> 52) & 0x7FF);
    const std::uint64_t frac = u & ((std::uint64_t(1) << 52) - 1);
    if (biased == 0) return -1074 + __builtin_ctzll(frac);  // subnormal
    return biased - 1075 + __builtin_ctzll(frac | (std::uint64_t(1) << 52));
}

}  // namespace

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
    const auto at = [&](int o, int l) { return as_rows ? element(x, o, l) : element(x, l, o); };
    parallel_for(threads, (outer + kGroup - 1) / kGroup, [&](int grp, int) {
        const int o0 = grp * kGroup, o1 = std::min(outer, o0 + kGroup);
        double mx[kGroup] = {}, s1[kGroup] = {}, s2[kGroup] = {};
        int lsb[kGroup];
        bool nonfinite = false;
        for (int o = o0; o < o1; ++o) lsb[o - o0] = kLsbNone;
        for (int l = 0; l < depth; ++l)
            for (int o = o0; o < o1; ++o) {
                const double v = std::fabs(at(o, l));
                nonfinite = nonfinite || !(v <= 1.79769313486231570815e308);
                mx[o - o0] = v > mx[o - o0] ? v : mx[o - o0];
                if (v != 0) lsb[o - o0] = std::min(lsb[o - o0], lowest_bit_exponent(v));
            }
        if (nonfinite) {
            bad = true;
            return;
        }
        double scale[kGroup];
        for (int o = o0; o < o1; ++o) {
            const int e = mx[o - o0] != 0 ? ceil_log2(mx[o - o0]) : 0;
            out->e[o] = e;
            scale[o - o0] = std::ldexp(1.0, -e);  // below 2^1024: e >= -1074
        }
        // Scaled by 2^-e every value is in [-1, 1] (std::ldexp where 2^-e itself would overflow).
        for (int l = 0; l < depth; ++l)
            for (int o = o0; o < o1; ++o) {
                const int e = out->e[o];
                const double v = e >= -1022 ? std::fabs(at(o, l)) * scale[o - o0]
                                            : std::ldexp(std::fabs(at(o, l)), -e);
                s1[o - o0] += v;
                s2[o - o0] += v * v;
            }
        bool seen = false;
        for (int o = o0; o < o1; ++o) {
            const int i = o - o0;
            out->zero[o] = mx[i] == 0;
            out->lsb[o] = lsb[i];
            seen = seen || mx[i] != 0;
            if (mx[i] == 0) continue;
            // Upper bounds: K roundings of terms in [0, 1] (relative 2^-53 each, and 2^-1074
            // absolute where a square underflows), far inside the factors below for any K < 2^31.
            out->n1[o] = s1[i] * (1 + 0x1p-20) + 0x1p-900;
            const double n2 = std::sqrt(s2[i] * (1 + 0x1p-20) + 0x1p-900) * (1 + 0x1p-50);
            out->nu[o] = ceil_log2(n2);  // n2 > 1/2 (the largest entry is above 1/2 scaled)
        }
        if (seen) any = true;
    });
    if (bad) return reason::domain_nonfinite;
    out->any_nonzero = any;
    return nullptr;
}

}  // namespace amxblas::kernels

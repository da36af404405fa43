// What one read-only pass over a GEMM operand found (kernels/scan/operand_scan.h computes it;
// the policy's domain rules, policy/domain.h, judge it). A plain type every layer may read.
#pragma once

#include <cmath>

namespace amxblas::kernels {

struct OperandSummary {
    bool nonfinite = false;  // some entry is NaN or +-Inf (the fields below skip such entries)
    double max_abs = 0;      // largest finite |x|; 0 when every entry is zero (or nonfinite)
    double min_abs = 0;      // smallest finite nonzero |x|; 0 when there is none
    // FP64 scans only: the smallest 2^L over finite nonzero entries, where 2^L is the weight of
    // the lowest set bit of x's significand (x is an odd multiple of 2^L). Every residual and
    // every slice the FP64 split makes of this operand is a multiple of min_lowbit.
    double min_lowbit = 0;

    bool all_zero() const { return max_abs == 0; }
    // ceil(log2(max_abs)): v(0) of the Ozaki split. Meaningless when all_zero().
    int max_exponent() const {
        int e;
        const double f = std::frexp(max_abs, &e);  // max_abs = f * 2^e, f in [0.5, 1)
        return f == 0.5 ? e - 1 : e;
    }
    // log2(min_lowbit) (exact: min_lowbit is a power of two). Meaningless when all_zero().
    int lowbit_exponent() const { return std::ilogb(min_lowbit); }
};

// The summaries of op(A) and op(B). When op(A) alone decides the call (a nonfinite entry), b is
// left unscanned (all zero).
struct OperandScans {
    OperandSummary a, b;
};

}  // namespace amxblas::kernels

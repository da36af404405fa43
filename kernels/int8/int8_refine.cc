// The second look at failing entries (int8_refine.h). Compiled without FMA contraction: the
// rounding allowance below counts one rounding per product and per addition.
#include "kernels/int8/int8_refine.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/pow2.h"
#include "kernels/pack/operand_element.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

double magnitude_lower_bound(const OperandView<double>& a, const OperandView<double>& b, const Int8OperandFacts& fa,
                             const Int8OperandFacts& fb, int i, int j) {
    const int k = a.cols, sa = -fa.e[i], sb = -fb.e[j];
    double sum = 0;
    if (a.kind == Interleave::real && b.kind == Interleave::real && sa >= -1022 && sa <= 1023 && sb >= -1022 &&
        sb <= 1023) {
        // The same products as below (times_pow2 is x 2^e there), through the strides.
        const double fa_i = pow2(sa), fb_j = pow2(sb);
        const std::size_t step_a = a.trans == 'N' ? std::size_t(a.ld) : 1, step_b = b.trans == 'N' ? 1 : std::size_t(b.ld);
        const double* x = a.trans == 'N' ? a.x + i : a.x + std::size_t(i) * a.ld;
        const double* y = b.trans == 'N' ? b.x + std::size_t(j) * b.ld : b.x + j;
        for (int l = 0; l < k; ++l) sum += std::fabs(x[l * step_a] * fa_i) * std::fabs(y[l * step_b] * fb_j);
    } else {
        for (int l = 0; l < k; ++l)
            sum += std::fabs(times_pow2(element(a, i, l), sa)) * std::fabs(times_pow2(element(b, l, j), sb));
    }
    // Each scaled value is exact or, below 2^-1022, within 2^-1075 of the exact one (all are at
    // most 1), so each exact term is at least the computed product's exact value less 2^-1074;
    // each product and addition rounds once (relative u, or 2^-1075 below 2^-1022). So the
    // exact sum is at least sum / ((1 + u)(1 + gamma_k)) - k 2^-1073, which the factor and the
    // subtraction below (each rounding once more, within their slack) bound from below.
    return std::max(0.0, sum * (1 - double(k + 4) * 0x1p-52) - double(k + 2) * 0x1p-1000);
}

std::vector<double> magnitude_lower_bounds(const OperandView<double>& a, const OperandView<double>& b,
                                           const Int8OperandFacts& fa, const Int8OperandFacts& fb,
                                           const std::vector<std::size_t>& at, int threads) {
    const std::size_t m = std::size_t(fa.outer);
    std::vector<double> lower(at.size());
    parallel_for(threads, int(at.size()), [&](int q, int) {
        lower[std::size_t(q)] = magnitude_lower_bound(a, b, fa, fb, int(at[std::size_t(q)] % m), int(at[std::size_t(q)] / m));
    });
    return lower;
}

}  // namespace amxblas::kernels

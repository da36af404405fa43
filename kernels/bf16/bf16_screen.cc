// The BF16 engine's screen (bf16_screen.h; docs/fp64-certificate.md, Section 12). Compiled
// without FMA contraction: the rounding allowances below count one rounding per product and per
// addition.
#include "kernels/bf16/bf16_screen.h"

#include <algorithm>
#include <cmath>
#include <complex>

#include "kernels/isa/isa.h"
#include "kernels/pack/pack_fp64.h"

namespace amxblas::kernels {
namespace {

constexpr double kU = 0x1p-53;

// What the BF16 engine's split of one scaled operand (rows x cols, column-major) finds: the
// residual its eight slices leave, max |X^(8)|, and (row_sums, for op(A)) a_0(i) = sum_l
// |Z_0(i, l)| (exact: multiples of 2^-8 of at most 1). The engine finds its scales by
// speculation and checks them (pack_fp64.h); what it keeps is the split with the exact scales:
// v(0) = 0 (every nonzero scaled row or column has its largest entry in (1/2, 1]), then
// v(t) = ceil(log2 max |X^(t)|) until a residual is 0 or below 2^kFp64MinSliceExp. That split
// is computed here directly, slice by slice over all values, with split.h's arithmetic
// (Z = fl(fl(x + sigma) - sigma), x - Z exact), without the rounding to BF16 (exact on Z) and
// the stores.
double bf16_residual(const double* x, int rows, int cols, bool nonzero, double* work, double* row_sums) {
    if (row_sums) std::fill(row_sums, row_sums + rows, 0.0);
    if (!nonzero) return 0;
    const std::size_t count = std::size_t(rows) * cols;
    std::copy(x, x + count, work);
    double resid = 1, sigma = ozaki_sigma(1.0);
    for (int t = 0; t < kFp64Slices; ++t) {
        if (t > 0) {
            if (resid == 0) return 0;
            sigma = ozaki_sigma(resid);
            if (ozaki_v(sigma) < kFp64MinSliceExp) return resid;  // the chain ends: no more slices
        }
        const double mx = isa_kernels().screen->slice(work, count, sigma);
        if (t == 0 && row_sums)  // Z_0 = x - X^(1), exactly
            for (int c = 0; c < cols; ++c)
                for (int r = 0; r < rows; ++r)
                    row_sums[r] += std::fabs(x[r + std::size_t(c) * rows] - work[r + std::size_t(c) * rows]);
        resid = mx;
    }
    return resid;
}

}  // namespace

long bf16_screen(ScaledSample& x, const RunOptions& opt, long enough) {
    if (!x.scale(opt.workspace_cap_bytes)) return -1;
    const int m = x.m, n = x.n, k = x.k;
    // At every depth d <= 8 its truncation bound includes a_0(i) rho_B(d) and rho_A(d) bbar_j,
    // with rho non-increasing in d and bbar_j >= ||Bhat(:, j)||_1. op(A)'s term first: where it
    // alone counts more than `enough`, op(B)'s chain is not needed.
    const double nu = double(x.gamma_terms) * kU;
    const double tol_gamma_up = opt.fp64_tol * (nu / (1 - nu)) * (1 + 0x1p-40);
    const double rho_a = bf16_residual(x.ah, m, k, x.a_nonzero, x.work, x.a0);
    double rho_b = 0;
    long failing = 0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) rho_b = bf16_residual(x.bh, k, n, x.b_nonzero, x.work, nullptr);
        failing = 0;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                const double u = x.upper[i + std::size_t(j) * m];
                const double lower = std::max(rho_a * x.n1[j], x.a0[i] * rho_b) * (1 - 0x1p-50);
                failing += u != 0 && lower > tol_gamma_up * u;
            }
        if (enough >= 0 && failing > enough) break;
    }
    return failing;
}

template <typename T>
bool screen_split_facts(const GemmArgs<T>& s, ScreenSplitFacts* out) {
    ScaledSample x;
    if (!x.begin(s) || !x.scale(0)) return false;
    out->rho_a = bf16_residual(x.ah, x.m, x.k, x.a_nonzero, x.work, x.a0);
    out->rho_b = bf16_residual(x.bh, x.k, x.n, x.b_nonzero, x.work, nullptr);
    out->a0.assign(x.a0, x.a0 + x.m);
    return true;
}

template bool screen_split_facts(const GemmArgs<double>&, ScreenSplitFacts*);
template bool screen_split_facts(const GemmArgs<std::complex<double>>&, ScreenSplitFacts*);

}  // namespace amxblas::kernels

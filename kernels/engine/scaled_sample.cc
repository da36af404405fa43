// The scaled sample of the screens (scaled_sample.h; docs/fp64-certificate.md, Section 12).
// Compiled without FMA contraction: the rounding allowances below count one rounding per
// product and per addition.
#include "kernels/engine/scaled_sample.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/pow2.h"
#include "kernels/engine/gemm_call.h"
#include "kernels/isa/isa.h"
#include "kernels/pack/operand_element.h"

namespace amxblas::kernels {
namespace {

// |op(X)| times 2^-exps[o] per row (as_rows: op(A)) or per column (op(B)), as the packer scales
// it (pack_fp64.cc, block_scale: x f1 f2, with f2 = 1 unless 2^-e is not a normal double), into
// out, column-major: out[row + col * rows]. Magnitudes, because nothing the screens compute
// needs a sign: the upper bounds sum |a||b|, and the BF16 split rounds to nearest on a grid
// symmetric about 0 (sigma is an even multiple of the slice's spacing), so the slices of -x are
// those of x negated and the residuals have the same magnitudes; the roundings of the scaling
// are symmetric too.
void scale_outer(const OperandView<double>& x, bool as_rows, const int* exps, double* out) {
    const int outer = as_rows ? x.rows : x.cols;
    std::vector<double> f1(static_cast<std::size_t>(outer)), f2(static_cast<std::size_t>(outer));
    for (int o = 0; o < outer; ++o) {
        f1[o] = exps[o] >= -1023 ? pow2(-exps[o]) : pow2(1023);
        f2[o] = exps[o] >= -1023 ? 1.0 : pow2(-exps[o] - 1023);
    }
    for (int col = 0; col < x.cols; ++col) {
        double* dst = out + std::size_t(col) * x.rows;
        if (x.kind == Interleave::real) {
            const double* src = x.x + std::size_t(col) * x.ld;
            if (as_rows)
                for (int row = 0; row < x.rows; ++row) dst[row] = std::fabs(src[row]) * f1[row] * f2[row];
            else
                for (int row = 0; row < x.rows; ++row) dst[row] = std::fabs(src[row]) * f1[col] * f2[col];
        } else {
            for (int row = 0; row < x.rows; ++row) {
                const int o = as_rows ? row : col;
                dst[row] = std::fabs(element(x, row, col)) * f1[o] * f2[o];
            }
        }
    }
}

std::size_t screen_bytes(int m, int n, int k) {
    // op(A) and op(B) scaled, a work copy of the larger, U, and a value per row and column.
    return ((std::size_t(m) + n + std::max(m, n)) * std::size_t(k) + std::size_t(m) * n + m + n) * sizeof(double);
}

// U_ij >= (|Ahat||Bhat|)_ij into x->upper, 0 where the computed sum is 0, and x->n1[j] <=
// ||Bhat(:, j)||_1. The FP64 sum of |ah||bh| in index order is within gamma_k of the sum of its
// terms, each within 2^-1075 of |Ahat||Bhat| (a scaled value may have been rounded: pack.h;
// |entries| <= 1), so sum (1 + (k + 4) 2^-52) + (k + 2) 2^-1000 bounds the exact value from
// above, these two roundings included.
void upper_bounds(ScaledSample* x) {
    const int m = x->m, n = x->n, k = x->k;
    const double up = 1 + double(k + 4) * 0x1p-52, pad = double(k + 2) * 0x1p-1000;
    const double down = 1 - double(k + 4) * 0x1p-52;
    isa_kernels().screen->upper(x->ah, m, x->bh, k, m, n, k, x->upper, m);
    for (int j = 0; j < n; ++j) {
        const double* y = x->bh + std::size_t(j) * k;
        double* u = x->upper + std::size_t(j) * m;
        double n1 = 0;
        for (int l = 0; l < k; ++l) n1 += y[l];
        x->n1[j] = std::max(0.0, n1 * down - double(k) * 0x1p-1074);
        for (int i = 0; i < m; ++i) u[i] = u[i] == 0 ? 0 : u[i] * up + pad;
    }
}

template <typename T>
bool begin_sample(const GemmArgs<T>& s, ScaledSample* x) {
    constexpr int parts = std::is_same_v<T, double> ? 1 : 2;
    x->va = view_a(s);
    x->vb = view_b(s);
    x->m = x->va.rows, x->n = x->vb.cols, x->k = x->va.cols;
    x->gamma_terms = parts == 1 ? s.k : s.k + 1;
    x->ea.resize(std::size_t(x->m));
    x->fb.resize(std::size_t(x->n));
    return !fp64_outer_exponents(x->va, true, 1, x->ea.data(), &x->a_nonzero) &&
           !fp64_outer_exponents(x->vb, false, 1, x->fb.data(), &x->b_nonzero);
}

}  // namespace

bool ScaledSample::begin(const GemmArgs<double>& s) { return begin_sample(s, this); }
bool ScaledSample::begin(const GemmArgs<std::complex<double>>& s) { return begin_sample(s, this); }

bool ScaledSample::scale(std::size_t cap) {
    if (scaled) return true;
    if (lease_workspace(screen_bytes(m, n, k), cap, &lease)) return false;
    ah = static_cast<double*>(lease.data());
    bh = ah + std::size_t(m) * k;
    work = bh + std::size_t(k) * n;                  // max(m, n) x k
    upper = work + std::size_t(std::max(m, n)) * k;  // m x n: U_ij, column-major
    a0 = upper + std::size_t(m) * n;                 // m
    n1 = a0 + m;                                     // n: lower bounds of ||Bhat(:, j)||_1
    scale_outer(va, true, ea.data(), ah);
    scale_outer(vb, false, fb.data(), bh);
    upper_bounds(this);
    scaled = true;
    return true;
}

std::size_t sample_screen_bytes(int r, int c, int k, int parts) { return screen_bytes(r, parts * c, parts * k); }

}  // namespace amxblas::kernels

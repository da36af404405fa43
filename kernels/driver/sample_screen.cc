// The screen of a sample's entries (sample_screen.h; the argument is docs/fp64-certificate.md,
// Section 12). Compiled without FMA contraction: the rounding allowances below count one
// rounding per product and per addition.
#include "kernels/driver/sample_screen.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "kernels/common/pow2.h"
#include "kernels/bf16/macro_kernel.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/isa/isa.h"
#include "kernels/pack/operand_element.h"
#include "kernels/pack/pack_fp64.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {
namespace {

constexpr double kU = 0x1p-53;

// The real GEMM of a sample: DGEMM's own operands; ZGEMM's parts (complex_gemm.cc, pack.h).
OperandView<double> view_a(const GemmArgs<double>& s) { return {'N', s.m, s.k, s.a, s.lda}; }
OperandView<double> view_b(const GemmArgs<double>& s) { return {'N', s.k, s.n, s.b, s.ldb}; }
OperandView<double> view_a(const GemmArgs<std::complex<double>>& s) {
    return {'N', s.m, 2 * s.k, reinterpret_cast<const double*>(s.a), s.lda, Interleave::complex_a};
}
OperandView<double> view_b(const GemmArgs<std::complex<double>>& s) {
    return {'N', 2 * s.k, 2 * s.n, reinterpret_cast<const double*>(s.b), s.ldb, Interleave::complex_b};
}

// |op(X)| times 2^-exps[o] per row (as_rows: op(A)) or per column (op(B)), as the packer scales
// it (pack_fp64.cc, block_scale: x f1 f2, with f2 = 1 unless 2^-e is not a normal double), into
// out, column-major: out[row + col * rows]. Magnitudes, because nothing below needs a sign: the
// upper bounds sum |a||b|, and the split rounds to nearest on a grid symmetric about 0 (sigma is
// an even multiple of the slice's spacing), so the slices of -x are those of x negated and the
// residuals have the same magnitudes; the roundings of the scaling are symmetric too.
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

std::size_t screen_bytes(int m, int n, int k) {
    // op(A) and op(B) scaled, a work copy of the larger, U, and a value per row and column.
    return ((std::size_t(m) + n + std::max(m, n)) * std::size_t(k) + std::size_t(m) * n + m + n) * sizeof(double);
}

// A sample's real GEMM (m x n x k), scaled as both engines scale it, in one lease.
struct ScaledSample {
    OperandView<double> va, vb;
    int m = 0, n = 0, k = 0;
    std::vector<int> ea, fb;  // the exponents, as fp64_outer_exponents finds them
    bool a_nonzero = false, b_nonzero = false;
    WorkspaceLease lease;
    double *ah = nullptr, *bh = nullptr;  // m x k and k x n, column-major
    double *work = nullptr, *upper = nullptr, *a0 = nullptr, *n1 = nullptr;
};

// The views and exponents of s; false where the engines would refuse it for its data (an Inf
// or NaN).
template <typename T>
bool sample_exponents(const GemmArgs<T>& s, ScaledSample* x) {
    x->va = view_a(s);
    x->vb = view_b(s);
    x->m = x->va.rows, x->n = x->vb.cols, x->k = x->va.cols;
    x->ea.resize(std::size_t(x->m));
    x->fb.resize(std::size_t(x->n));
    return !fp64_outer_exponents(x->va, true, 1, x->ea.data(), &x->a_nonzero) &&
           !fp64_outer_exponents(x->vb, false, 1, x->fb.data(), &x->b_nonzero);
}

// The lease and the scaled operands; false where the lease fails.
bool scale_sample(std::size_t cap, ScaledSample* x) {
    const int m = x->m, n = x->n, k = x->k;
    if (lease_workspace(screen_bytes(m, n, k), cap, &x->lease)) return false;
    x->ah = static_cast<double*>(x->lease.data());
    x->bh = x->ah + std::size_t(m) * k;
    x->work = x->bh + std::size_t(k) * n;                  // max(m, n) x k
    x->upper = x->work + std::size_t(std::max(m, n)) * k;  // m x n: U_ij, column-major
    x->a0 = x->upper + std::size_t(m) * n;                 // m: BF16's a_0(i)
    x->n1 = x->a0 + m;                                     // n: lower bounds of ||Bhat(:, j)||_1
    scale_outer(x->va, true, x->ea.data(), x->ah);
    scale_outer(x->vb, false, x->fb.data(), x->bh);
    return true;
}

// U_ij >= (|Ahat||Bhat|)_ij into x->upper, 0 where the computed sum is 0, and x->n1[j] <=
// ||Bhat(:, j)||_1. The FP64 sum of |ah||bh| in index order is within gamma_k of the sum of its
// terms, each within 2^-1075 of |Ahat||Bhat| (a scaled value may have been rounded: pack.h;
// |entries| <= 1), so sum (1 + (k + 4) 2^-52) + (k + 2) 2^-1000 bounds the exact value from
// above, these two roundings included. Where the sum is 0 the entry may be zero term by term,
// which both engines pass: the screen leaves it alone.
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

}  // namespace

std::size_t sample_screen_bytes(int r, int c, int k, int parts) { return screen_bytes(r, parts * c, parts * k); }

template <typename T>
bool screen_split_facts(const GemmArgs<T>& s, ScreenSplitFacts* out) {
    ScaledSample x;
    if (!sample_exponents(s, &x) || !scale_sample(0, &x)) return false;
    out->rho_a = bf16_residual(x.ah, x.m, x.k, x.a_nonzero, x.work, x.a0);
    out->rho_b = bf16_residual(x.bh, x.k, x.n, x.b_nonzero, x.work, nullptr);
    out->a0.assign(x.a0, x.a0 + x.m);
    return true;
}

template <typename T>
SampleScreen screen_sample(const GemmArgs<T>& s, const RunOptions& opt, bool int8, bool bf16, long enough) {
    constexpr int parts = std::is_same_v<T, double> ? 1 : 2;
    SampleScreen out;
    if ((!int8 && !bf16) || check_backend(opt)) return out;
    ScaledSample x;
    if (!sample_exponents(s, &x)) return out;
    const int m = x.m, n = x.n, k = x.k;
    const int gamma_terms = parts == 1 ? s.k : s.k + 1;  // the n of gamma_n, as both engines take it

    // INT8: its own test, on the facts it computes, in the same units (the same exponents).
    Int8OperandFacts ia, ib;
    Int8BlockCertificate cert;
    bool int8_any_count = false;
    if (int8) {
        if (int8_operand_facts(x.va, true, 1, &ia) || int8_operand_facts(x.vb, false, 1, &ib) || ia.e != x.ea ||
            ib.e != x.fb)
            return out;
        int8_any_count = cert.begin(ia, ib, gamma_terms, opt.fp64_tol, kInt8MinModuli, {});
        if (int8_any_count && enough >= 0) {
            // An entry that passes at some count with lhat = 0 passes whatever its lhat (the
            // test is monotone in lhat): on data whose rows and columns all become integers at
            // the largest count, the usual case, none can fail, and U is not needed.
            long could_fail = 0;  // counted until it passes `enough`
            for (int j = 0; j < n && could_fail <= enough; ++j)
                for (int i = 0; i < m && could_fail <= enough; ++i) could_fail += cert.fails_at_every_count(i, j, 0.0);
            if (could_fail <= enough) {
                out.int8_failing = 0;  // none shown: too few could be to act on
                return out;
            }
        }
    }
    if (!scale_sample(opt.workspace_cap_bytes, &x)) return out;
    upper_bounds(&x);
    const double* upper = x.upper;
    if (int8) {
        if (int8_any_count) {
            out.int8_failing = 0;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                    const double u = upper[i + std::size_t(j) * m];
                    out.int8_failing += u != 0 && cert.fails_at_every_count(i, j, u);
                }
        } else {
            out.int8_failing = long(m) * n;  // no count applies: the engine fails every entry
        }
        if (enough >= 0 && out.int8_failing <= enough) return out;
    }
    if (bf16) {
        // At every depth d <= 8 its truncation bound includes a_0(i) rho_B(d) and rho_A(d) bbar_j,
        // with rho non-increasing in d and bbar_j >= ||Bhat(:, j)||_1. op(A)'s term first: where
        // it alone counts more than `enough`, op(B)'s chain is not needed.
        const double nu = double(gamma_terms) * kU;
        const double tol_gamma_up = opt.fp64_tol * (nu / (1 - nu)) * (1 + 0x1p-40);
        const double rho_a = bf16_residual(x.ah, m, k, x.a_nonzero, x.work, x.a0);
        double rho_b = 0;
        for (int pass = 0; pass < 2; ++pass) {
            if (pass == 1) rho_b = bf16_residual(x.bh, k, n, x.b_nonzero, x.work, nullptr);
            out.bf16_failing = 0;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                    const double u = upper[i + std::size_t(j) * m];
                    const double lower = std::max(rho_a * x.n1[j], x.a0[i] * rho_b) * (1 - 0x1p-50);
                    out.bf16_failing += u != 0 && lower > tol_gamma_up * u;
                }
            if (enough >= 0 && out.bf16_failing > enough) break;
        }
    }
    return out;
}

template SampleScreen screen_sample(const GemmArgs<double>&, const RunOptions&, bool, bool, long);
template SampleScreen screen_sample(const GemmArgs<std::complex<double>>&, const RunOptions&, bool, bool, long);
template bool screen_split_facts(const GemmArgs<double>&, ScreenSplitFacts*);
template bool screen_split_facts(const GemmArgs<std::complex<double>>&, ScreenSplitFacts*);

}  // namespace amxblas::kernels

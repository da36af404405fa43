// The FP64 calls' writers and repairs (gemm_call.h), for DGEMM and ZGEMM.
#include "kernels/engine/gemm_call.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

template <typename R>
std::complex<R> op_at(char t, const std::complex<R>* x, std::int64_t ld, int row, int col) {
    const std::complex<R> v = t == 'N' ? x[row + std::size_t(col) * ld] : x[col + std::size_t(row) * ld];
    return t == 'C' ? std::conj(v) : v;
}

}  // namespace

std::vector<std::size_t> complex_entries(const std::size_t* at, std::size_t count, int m) {
    const std::size_t rows = std::size_t(m);
    std::vector<std::size_t> e(count);
    for (std::size_t q = 0; q < count; ++q) e[q] = at[q] % rows + at[q] / rows / 2 * rows;
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
    return e;
}

Fp64Repairer dgemm_repairer(const GemmArgs<double>& g) {
    return [g](const std::size_t* repair_at, std::size_t repairs) -> std::function<void(int)> {
        std::vector<double> c_old(repairs);
        for (std::size_t q = 0; q < repairs; ++q) {
            const std::size_t i = repair_at[q] % std::size_t(g.m), j = repair_at[q] / std::size_t(g.m);
            c_old[q] = g.beta == 0.0 ? 0.0 : g.c[i + j * std::size_t(g.ldc)];
        }
        return [g, repair_at, repairs, c_old = std::move(c_old)](int threads) {
            const OperandView<double> va = view_a(g), vb = view_b(g);
            const auto at = [](const OperandView<double>& v, int row, int col) {
                return v.trans == 'N' ? v.x[row + std::size_t(col) * v.ld] : v.x[col + std::size_t(row) * v.ld];
            };
            parallel_for(threads, int(repairs), [&](int q, int) {
                const int i = int(repair_at[q] % std::size_t(g.m)), j = int(repair_at[q] / std::size_t(g.m));
                double dot = 0;
                for (int l = 0; l < g.k; ++l) dot += at(va, i, l) * at(vb, l, j);
                double* c = g.c + i + std::size_t(j) * g.ldc;
                *c = g.beta == 0.0 ? g.alpha * dot : g.alpha * dot + g.beta * c_old[q];
            });
        };
    };
}

// s := s + a b over l in index order, each part in real arithmetic; then C := alpha s + beta
// C_old like the block writer.
Fp64Repairer zgemm_repairer(const GemmArgs<std::complex<double>>& g) {
    using Z = std::complex<double>;
    return [g](const std::size_t* at, std::size_t count) -> std::function<void(int)> {
        const std::size_t m = std::size_t(g.m);
        std::vector<std::size_t> entries = complex_entries(at, count, g.m);  // i + j * m of C
        std::vector<Z> c_old(entries.size());
        for (std::size_t q = 0; q < entries.size(); ++q)
            c_old[q] = g.beta == Z(0) ? Z(0) : g.c[entries[q] % m + entries[q] / m * std::size_t(g.ldc)];
        return [g, entries = std::move(entries), c_old = std::move(c_old)](int threads) {
            const char ta = complex_trans(g.transa), tb = complex_trans(g.transb);
            const std::size_t m = std::size_t(g.m);
            parallel_for(threads, int(entries.size()), [&](int q, int) {
                const int i = int(entries[q] % m), j = int(entries[q] / m);
                double re = 0, im = 0;
                for (int l = 0; l < g.k; ++l) {
                    const Z a = op_at(ta, g.a, g.lda, i, l), b = op_at(tb, g.b, g.ldb, l, j);
                    re += a.real() * b.real() - a.imag() * b.imag();
                    im += a.real() * b.imag() + a.imag() * b.real();
                }
                const Z v = fortran_mul(g.alpha, Z(re, im));
                g.c[i + std::size_t(j) * g.ldc] = g.beta == Z(0) ? v : v + fortran_mul(g.beta, c_old[q]);
            });
        };
    };
}

Fp64Gemm fp64_gemm(const GemmArgs<double>& g) {
    Fp64Gemm call;
    call.a = view_a(g);
    call.b = view_b(g);
    call.m = g.m;
    call.n = g.n;
    call.k = g.k;
    call.write = [&g](int i0, int j0, int rows, int cols, const double* acc) { write_block(g, i0, j0, rows, cols, acc); };
    call.repairer = dgemm_repairer(g);
    return call;
}

Fp64Gemm fp64_gemm(const GemmArgs<std::complex<double>>& g) {
    Fp64Gemm call;
    call.a = view_a(g);
    call.b = view_b(g);
    call.m = g.m;
    call.n = 2 * g.n;
    call.k = 2 * g.k;
    call.gamma_terms = g.k + 1;  // per part (docs/fp64-certificate.md, Section 9)
    call.complex_parts = true;
    call.write = [&g](int i0, int j0, int rows, int cols, const double* acc) {
        write_complex_block(g, i0, j0, rows, cols, acc);
    };
    call.repairer = zgemm_repairer(g);
    return call;
}

}  // namespace amxblas::kernels

// CGEMM and ZGEMM on the real macro-kernel. A complex product is one real GEMM of the real
// and imaginary parts (pack.h, Interleave):
//
//   op(A') = [Ar0 Ai0 Ar1 Ai1 ...]   (m x 2k: the parts of op(A)'s row i, interleaved)
//   op(B') = [ Br  Bi ]              (2k x 2n: each op(B)(l, j) becomes a 2 x 2 block)
//            [-Bi  Br ]
//   (op(A') op(B'))(i, 2j)     = sum_l Ar Br - Ai Bi = Re C(i, j)
//   (op(A') op(B'))(i, 2j + 1) = sum_l Ar Bi + Ai Br = Im C(i, j)
//
// so every slice pair gives the four real products of the complex one, no more. Each part is
// split once per place it appears in op(A') or op(B'), straight from the interleaved storage
// (the packer gathers it; conjugation is a sign, and the split is odd, so -Bi's slices are
// those of Bi negated). The FP32 method (CGEMM) and the FP64 method (ZGEMM: the same two
// phases as DGEMM, prepare here and compute_dgemm) run unchanged on this real GEMM. FP64
// scales each row of op(A') and column of op(B') by a power of two over both parts of its
// complex row or column (fp64_exponents.cc) and undoes it before this writer: results stay exact per
// panel, hence identical on every backend and thread count.
#include <algorithm>
#include <climits>
#include <complex>
#include <vector>

#include "kernels/common/fortran_complex.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/bf16/blocked_gemm.h"
#include "kernels/int8/int8_gemm.h"
#include "kernels/pack/pack.h"
#include "kernels/common/reasons.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

char complex_trans(char t) {
    switch (t) {
        case 'N': case 'n': return 'N';
        case 'T': case 't': return 'T';
        default: return 'C';
    }
}

// C(i0.., j0/2..) := alpha * acc + beta * C over one block of op(A') op(B') (rows x real_cols),
// whose columns 2j and 2j + 1 are the real and imaginary parts of C's column j. Blocks are an
// even number of columns wide, so both lie in the same block. beta == 0 writes without reading C.
template <typename R, typename Acc>
void write_complex_block(const GemmArgs<std::complex<R>>& g, int i0, int j0, int rows, int real_cols, const Acc* acc) {
    const int cols = real_cols / 2;
    for (int j = 0; j < cols; ++j) {
        std::complex<R>* c = g.c + i0 + std::size_t(j0 / 2 + j) * g.ldc;
        for (int i = 0; i < rows; ++i) {
            const Acc* p = acc + i * kBlockN + 2 * j;
            const std::complex<R> v = fortran_mul(g.alpha, std::complex<R>(R(p[0]), R(p[1])));
            c[i] = g.beta == std::complex<R>(0) ? v : v + fortran_mul(g.beta, c[i]);
        }
    }
}

// The views of op(A') and op(B') over the caller's complex storage.
template <typename R>
OperandView<R> view_a(const GemmArgs<std::complex<R>>& g) {
    return {complex_trans(g.transa), g.m, 2 * g.k, reinterpret_cast<const R*>(g.a), g.lda, Interleave::complex_a};
}
template <typename R>
OperandView<R> view_b(const GemmArgs<std::complex<R>>& g) {
    return {complex_trans(g.transb), 2 * g.k, 2 * g.n, reinterpret_cast<const R*>(g.b), g.ldb, Interleave::complex_b};
}

template <typename R>
std::complex<R> op_at(char t, const std::complex<R>* x, std::int64_t ld, int row, int col) {
    const std::complex<R> v = t == 'N' ? x[row + std::size_t(col) * ld] : x[col + std::size_t(row) * ld];
    return t == 'C' ? std::conj(v) : v;
}

// ZGEMM's repairs (auto). The certificate judges the entries of the real GEMM, whose columns
// 2j and 2j + 1 are the parts of C's column j; a failing part recomputes the whole complex
// entry: s := s + a b over l in index order, each part in real arithmetic as the reference's
// complex multiply-add does, which meets the certificate's per-part bound gamma_{K+1}
// (docs/fp64-certificate.md, Section 9); then C := alpha s + beta C_old like the block writer.
Fp64Repairer zgemm_repairer(const GemmArgs<std::complex<double>>& g) {
    using Z = std::complex<double>;
    return [g](const std::size_t* at, std::size_t count) -> std::function<void(int)> {
        const std::size_t m = std::size_t(g.m);
        std::vector<std::size_t> entries(count);  // i + j * m of C, ascending and distinct
        for (std::size_t q = 0; q < count; ++q) entries[q] = at[q] % m + at[q] / m / 2 * m;
        std::sort(entries.begin(), entries.end());
        entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
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

// 2K and 2N must stay in int, with room for the padding to 32: a call this large could not
// allocate its component buffers anyway (2N x 2K BF16 values per slice).
bool too_large(int n, int k) { return n > (INT_MAX - 64) / 2 || k > (INT_MAX - 64) / 2; }

// The INT8 engine's view of a ZGEMM (the real GEMM of the parts), without its writer and repairs.
Int8Gemm int8_zgemm(const GemmArgs<std::complex<double>>& g, const StructuralTest& structural) {
    Int8Gemm call;
    call.a = view_a(g);
    call.b = view_b(g);
    call.m = g.m;
    call.n = 2 * g.n;
    call.k = 2 * g.k;
    call.gamma_terms = g.k + 1;  // per part, as the BF16 certificate's (docs/fp64-certificate.md, Section 9)
    call.complex_parts = true;
    call.structural = structural;
    return call;
}

}  // namespace

std::size_t cgemm_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return sgemm_workspace_bytes(m, 2 * n, 2 * k, threads, backend);
}

std::size_t zgemm_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return dgemm_workspace_bytes(m, 2 * n, 2 * k, threads, 21, backend);
}

const char* emulate_cgemm(const GemmArgs<std::complex<float>>& g, const RunOptions& opt) {
    if (too_large(g.n, g.k)) return reason::memory_alloc_failed;
    return guarded([&] {
        return run_fp32_gemm(view_a(g), view_b(g), g.m, 2 * g.n, 2 * g.k, opt,
                             [&g](int i0, int j0, int rows, int cols, const float* acc) {
                                 write_complex_block(g, i0, j0, rows, cols, acc);
                             });
    });
}

const char* emulate_zgemm_int8(const GemmArgs<std::complex<double>>& g, const RunOptions& opt,
                               const StructuralTest& structural) {
    if (too_large(g.n, g.k)) return reason::memory_alloc_failed;
    Int8Gemm call = int8_zgemm(g, structural);
    call.write = [&g](int i0, int j0, int rows, int cols, const double* acc) {
        write_complex_block(g, i0, j0, rows, cols, acc);
    };
    call.repairer = zgemm_repairer(g);
    return run_int8_fp64_gemm(call, opt);
}

const char* decide_zgemm_int8(const GemmArgs<std::complex<double>>& g, const RunOptions& opt,
                              const StructuralTest& structural, Int8Decision* out) {
    if (too_large(g.n, g.k)) return reason::memory_alloc_failed;
    return int8_fp64_decide(int8_zgemm(g, structural), opt, out);
}

const char* prepare_zgemm(const GemmArgs<std::complex<double>>& g, const RunOptions& opt, PreparedDgemm* out) {
    if (too_large(g.n, g.k)) return reason::memory_alloc_failed;
    // The writer and the repairer keep their own copies of the arguments: they run in
    // compute_dgemm.
    const char* why = guarded([&]() -> const char* {
        if (const char* w = prepare_fp64_gemm(view_a(g), view_b(g), g.m, 2 * g.n, 2 * g.k, opt,
                                                [g](int i0, int j0, int rows, int cols, const double* acc) {
                                                    write_complex_block(g, i0, j0, rows, cols, acc);
                                                },
                                                out))
            return w;
        set_fp64_repairer(out, zgemm_repairer(g));
        return nullptr;
    });
    if (why) *out = PreparedDgemm();  // a failed prepare frees its workspace at once
    return why;
}

}  // namespace amxblas::kernels

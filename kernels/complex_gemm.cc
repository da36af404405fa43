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
// complex row or column (pack.cc) and undoes it before this writer: results stay exact per
// panel, hence identical on every backend and thread count.
#include <climits>
#include <complex>

#include "kernels/emulated_gemm.h"
#include "kernels/macro_kernel.h"
#include "kernels/pack.h"
#include "kernels/reasons.h"

namespace amxblas::kernels {
namespace {

char complex_trans(char t) {
    switch (t) {
        case 'N': case 'n': return 'N';
        case 'T': case 't': return 'T';
        default: return 'C';
    }
}

// (a+bi)(c+di) = (ac-bd) + (ad+bc)i, as the reference BLAS's Fortran computes it.
template <typename R>
std::complex<R> mul(std::complex<R> x, std::complex<R> y) {
    return {x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real()};
}

// C(i0.., j0/2..) := alpha * acc + beta * C over the valid part of one block of op(A') op(B'),
// whose columns 2j and 2j + 1 are the real and imaginary parts of C's column j. BN is even, so
// both lie in the same block. beta == 0 writes without reading C.
template <typename R, typename Acc>
void write_complex_block(const GemmArgs<std::complex<R>>& g, int i0, int j0, const Acc* acc) {
    const int rows = std::min(kBlockM, g.m - i0), cols = std::min(kBlockN, 2 * g.n - j0) / 2;
    for (int j = 0; j < cols; ++j) {
        std::complex<R>* c = g.c + i0 + std::size_t(j0 / 2 + j) * g.ldc;
        for (int i = 0; i < rows; ++i) {
            const Acc* p = acc + i * kBlockN + 2 * j;
            const std::complex<R> v = mul(g.alpha, std::complex<R>(R(p[0]), R(p[1])));
            c[i] = g.beta == std::complex<R>(0) ? v : v + mul(g.beta, c[i]);
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

// 2K and 2N must stay in int, with room for the padding to 32: a call this large could not
// allocate its component buffers anyway (2N x 2K BF16 values per slice).
bool too_large(int n, int k) { return n > (INT_MAX - 64) / 2 || k > (INT_MAX - 64) / 2; }

}  // namespace

std::size_t cgemm_workspace_bytes(int m, int n, int k, int threads) {
    return sgemm_workspace_bytes(m, 2 * n, 2 * k, threads);
}

std::size_t zgemm_workspace_bytes(int m, int n, int k, int threads) {
    return dgemm_workspace_bytes(m, 2 * n, 2 * k, threads);
}

const char* emulate_cgemm(const GemmArgs<std::complex<float>>& g, const RunOptions& opt) {
    if (too_large(g.n, g.k)) return reason::memory_alloc_failed;
    return guarded([&] {
        return run_fp32_gemm(view_a(g), view_b(g), g.m, 2 * g.n, 2 * g.k, opt,
                             [&g](int i0, int j0, const float* acc) { write_complex_block(g, i0, j0, acc); });
    });
}

const char* prepare_zgemm(const GemmArgs<std::complex<double>>& g, const RunOptions& opt, PreparedDgemm* out) {
    if (too_large(g.n, g.k)) return reason::memory_alloc_failed;
    // The writer keeps its own copy of the arguments: it runs in compute_dgemm. A failed
    // prepare leaves no state behind (prepare_fp64_gemm sets it only on success).
    return guarded([&] {
        return prepare_fp64_gemm(view_a(g), view_b(g), g.m, 2 * g.n, 2 * g.k, opt,
                                 [g](int i0, int j0, const double* acc) { write_complex_block(g, i0, j0, acc); },
                                 out);
    });
}

}  // namespace amxblas::kernels

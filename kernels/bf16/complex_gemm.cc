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
#include <complex>

#include "kernels/bf16/blocked_gemm.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/common/reasons.h"

namespace amxblas::kernels {

std::size_t cgemm_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return sgemm_workspace_bytes(m, 2 * n, 2 * k, threads, backend);
}

std::size_t zgemm_workspace_bytes(int m, int n, int k, int threads, Backend backend) {
    return dgemm_workspace_bytes(m, 2 * n, 2 * k, threads, 21, backend);
}

const char* emulate_cgemm(const GemmArgs<std::complex<float>>& g, const RunOptions& opt) {
    if (complex_too_large(g.n, g.k)) return reason::memory_alloc_failed;
    return guarded([&] {
        return run_fp32_gemm(view_a(g), view_b(g), g.m, 2 * g.n, 2 * g.k, opt,
                             [&g](int i0, int j0, int rows, int cols, const float* acc) {
                                 write_complex_block(g, i0, j0, rows, cols, acc);
                             });
    });
}

const char* prepare_zgemm(const GemmArgs<std::complex<double>>& g, const RunOptions& opt, PreparedDgemm* out) {
    if (complex_too_large(g.n, g.k)) return reason::memory_alloc_failed;
    // The writer and the repairer keep their own copies of the arguments: they run in
    // compute_dgemm.
    Fp64Gemm call = fp64_gemm(g);
    call.write = [g](int i0, int j0, int rows, int cols, const double* acc) {
        write_complex_block(g, i0, j0, rows, cols, acc);
    };
    return prepare_fp64(call, opt, out);
}

}  // namespace amxblas::kernels

// The GEMM call as every engine sees it: op(A) and op(B) as views of the caller's storage, the
// writer that puts C's blocks back, and, for FP64, the repairs of the entries a certificate
// could not vouch for. A complex call is one real GEMM of its real and imaginary parts
// (pack.h, Interleave; kernels/bf16/complex_gemm.cc draws it): its writer takes the parts of
// C's column j from the real GEMM's columns 2j and 2j + 1.
//
// Blocks: acc is row-major with row stride kBlockN and holds op(A) op(B) for rows
// i0 .. i0 + rows - 1 and columns j0 .. j0 + cols - 1 of the real GEMM, rows <= BM and cols <=
// BN; j0 and cols are even for a complex call. Blocks are written by the pool's threads
// concurrently; no two blocks overlap. beta == 0 never reads C (NaN or Inf already in C does
// not survive).
#pragma once

#include <climits>
#include <complex>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <vector>

#include "kernels/certificate/fp64_certificate.h"
#include "kernels/common/fortran_complex.h"
#include "kernels/common/gemm_types.h"
#include "kernels/isa/microkernel.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/pack/pack.h"

namespace amxblas::kernels {

template <typename Acc>
using BlockWriter = std::function<void(int i0, int j0, int rows, int cols, const Acc* acc)>;

// The repairs for the caller's C. Called with the real GEMM's entries the certificate could not
// vouch for (i + j * m, ascending) before the products write C: it keeps what it needs of C's
// old values and returns the work that recomputes the entries after them, on `threads` threads.
using Fp64Repairer = std::function<std::function<void(int threads)>(const std::size_t* at, std::size_t count)>;

// 'N' for 'N' and 'n', else 'T' (real views); complex views keep 'C', a sign the packer applies.
inline char normalise_trans(char t) { return is_no_trans(t) ? 'N' : 'T'; }
inline char complex_trans(char t) {
    switch (t) {
        case 'N': case 'n': return 'N';
        case 'T': case 't': return 'T';
        default: return 'C';
    }
}

// The views of op(A) and op(B); for a complex call, of op(A') (m x 2k) and op(B') (2k x 2n)
// over the caller's interleaved storage.
template <typename T>
OperandView<T> view_a(const GemmArgs<T>& g) {
    return {normalise_trans(g.transa), g.m, g.k, g.a, g.lda};
}
template <typename T>
OperandView<T> view_b(const GemmArgs<T>& g) {
    return {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb};
}
template <typename R>
OperandView<R> view_a(const GemmArgs<std::complex<R>>& g) {
    return {complex_trans(g.transa), g.m, 2 * g.k, reinterpret_cast<const R*>(g.a), g.lda, Interleave::complex_a};
}
template <typename R>
OperandView<R> view_b(const GemmArgs<std::complex<R>>& g) {
    return {complex_trans(g.transb), 2 * g.k, 2 * g.n, reinterpret_cast<const R*>(g.b), g.ldb, Interleave::complex_b};
}

// C(i0.., j0..) := alpha * acc + beta * C over one block of rows x cols.
template <typename T>
void write_block(const GemmArgs<T>& g, int i0, int j0, int rows, int cols, const T* acc) {
    if constexpr (std::is_same_v<T, double>) {  // the instruction set's (kernels/isa/reconstruct.h)
        reconstruct_kernels().write_fp64(acc, kBlockN, rows, cols, g.alpha, g.beta, g.c + i0 + std::size_t(j0) * g.ldc,
                                         std::size_t(g.ldc));
        return;
    }
    for (int j = 0; j < cols; ++j) {
        T* c = g.c + i0 + std::size_t(j0 + j) * g.ldc;
        if (g.beta == T(0)) {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * acc[i * kBlockN + j];
        } else {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * acc[i * kBlockN + j] + g.beta * c[i];
        }
    }
}

// C(i0.., j0/2..) := alpha * acc + beta * C over one block of op(A') op(B') (rows x real_cols),
// whose columns 2j and 2j + 1 are the real and imaginary parts of C's column j. Blocks are an
// even number of columns wide, so both lie in the same block.
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

// 2K and 2N of a complex call must stay in int, with room for the padding to 32: a call this
// large could not allocate its buffers anyway (2N x 2K values per slice or modulus).
inline bool complex_too_large(int n, int k) { return n > (INT_MAX - 64) / 2 || k > (INT_MAX - 64) / 2; }

// The FP64 repairs (auto): DGEMM's entries as FP64 inner products in index order, the
// computation DGEMM's own error bound describes; ZGEMM's whole complex entries, each part in
// real arithmetic as the reference's complex multiply-add does, which meets the certificate's
// per-part bound gamma_{K+1} (docs/fp64-certificate.md, Section 9). Each keeps a copy of g.
Fp64Repairer dgemm_repairer(const GemmArgs<double>& g);
Fp64Repairer zgemm_repairer(const GemmArgs<std::complex<double>>& g);

// One FP64 call as the engines run it: DGEMM's, or a ZGEMM's real GEMM of the parts (m rows,
// 2n columns, depth 2k).
struct Fp64Gemm {
    OperandView<double> a, b;
    int m = 0, n = 0, k = 0;
    int gamma_terms = 0;         // the n of the bound gamma_n; 0: k (DGEMM's)
    bool complex_parts = false;  // ZGEMM's real GEMM: columns 2j and 2j + 1 are C's column j
    BlockWriter<double> write;
    Fp64Repairer repairer;
    // The certificates' tests for entries zero by structure (fp64_structural_zeros.h), in the
    // real GEMM's indices; empty: none proven. Set per engine (its term test spends a budget).
    StructuralTest structural;
};

// The call of g, its writer reading g (which must outlive the call and anything prepared from
// it), its repairer holding a copy. structural is left empty.
Fp64Gemm fp64_gemm(const GemmArgs<double>& g);
Fp64Gemm fp64_gemm(const GemmArgs<std::complex<double>>& g);

// The C entries (i + j * m) a complex call's failing parts (i + jr * m of its real GEMM) belong
// to: ascending, each once.
std::vector<std::size_t> complex_entries(const std::size_t* at, std::size_t count, int m);

}  // namespace amxblas::kernels

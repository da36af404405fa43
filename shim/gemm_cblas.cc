// The exported CBLAS wrappers (cblas_sgemm, cblas_dgemm), generated from shim/routines.def.
// A row-major call is the column-major call on swapped operands: C^T = op(B)^T * op(A)^T.
#include <type_traits>

#include "shim/gemm_dispatch.h"
#include "shim/real_blas.h"
#include "shim/reentry.h"

namespace amxblas {
namespace {

// 'N', 'T', 'C', or 0 for a value that is not a CBLAS_TRANSPOSE.
char trans_char(int t) {
    switch (t) {
        case kCblasNoTrans: return 'N';
        case kCblasTrans: return 'T';
        case kCblasConjTrans: return 'C';
        default: return 0;
    }
}

template <typename T>
void cblas_gemm(Routine r, int layout, int transa, int transb, int m, int n, int k, T alpha,
                const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc) {
    auto forward = [&] {
        real<CblasGemmFn<T>>(r)(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                ldc);
    };
    if (ReentryGuard::held()) return forward();
    ReentryGuard guard;

    const char ta = trans_char(transa), tb = trans_char(transb);
    CallRecord rec{};
    rec.routine = r;
    rec.layout = layout == kCblasRowMajor ? "row" : layout == kCblasColMajor ? "col" : "invalid";
    rec.transa = ta ? ta : '?';
    rec.transb = tb ? tb : '?';
    rec.m = m;
    rec.n = n;
    rec.k = k;
    rec.lda = lda;
    rec.ldb = ldb;
    rec.ldc = ldc;

    kernels::GemmArgs<T> args{};
    if (layout == kCblasColMajor) {
        args = {ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
    } else if (layout == kCblasRowMajor) {
        args = {tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc};
    } else {
        args.transa = 0;  // invalid: the policy forwards it and the real cblas_xerbla reports
    }
    dispatch_gemm(rec, args, forward);
}

}  // namespace
}  // namespace amxblas

#define AMXBLAS_FORTRAN_GEMM(name, T, I)
#define AMXBLAS_CBLAS_GEMM(name, T, I)                                                         \
    extern "C" __attribute__((visibility("default"))) void name(                               \
        int layout, int transa, int transb, I m, I n, I k, T alpha, const T* a, I lda,          \
        const T* b, I ldb, T beta, T* c, I ldc) {                                              \
        static_assert(std::is_same_v<I, int>, "shim/routines.def: convert the index type");    \
        amxblas::cblas_gemm<T>(amxblas::Routine::name, layout, transa, transb, m, n, k, alpha,  \
                               a, lda, b, ldb, beta, c, ldc);                                  \
    }
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM

// The exported Fortran-ABI wrappers (sgemm_, dgemm_), generated from shim/routines.def.
#include <type_traits>

#include "shim/gemm_dispatch.h"
#include "shim/real_blas.h"
#include "shim/reentry.h"

namespace amxblas {
namespace {

template <typename T>
void fortran_gemm(Routine r, const char* ta, const char* tb, const int* m, const int* n,
                  const int* k, const T* alpha, const T* a, const int* lda, const T* b,
                  const int* ldb, const T* beta, T* c, const int* ldc, std::size_t ta_len,
                  std::size_t tb_len) {
    // The hidden lengths travel unchanged: the real routine may read them.
    auto forward = [&] {
        real<FortranGemmFn<T>>(r)(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ta_len,
                                  tb_len);
    };
    if (ReentryGuard::held()) return forward();
    ReentryGuard guard;

    CallRecord rec{};
    rec.routine = r;
    rec.layout = "col";
    rec.transa = *ta;
    rec.transb = *tb;
    rec.m = *m;
    rec.n = *n;
    rec.k = *k;
    rec.lda = *lda;
    rec.ldb = *ldb;
    rec.ldc = *ldc;
    const kernels::GemmArgs<T> args{*ta, *tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc};
    dispatch_gemm(rec, args, forward);
}

}  // namespace
}  // namespace amxblas

#define AMXBLAS_FORTRAN_GEMM(name, T, I)                                                       \
    extern "C" __attribute__((visibility("default"))) void name(                               \
        const char* ta, const char* tb, const I* m, const I* n, const I* k,                    \
        const T* alpha, const T* a, const I* lda, const T* b, const I* ldb, const T* beta,     \
        T* c, const I* ldc, std::size_t ta_len, std::size_t tb_len) {                          \
        static_assert(std::is_same_v<I, int>, "shim/routines.def: convert the index type");    \
        amxblas::fortran_gemm<T>(amxblas::Routine::name, ta, tb, m, n, k, alpha, a, lda, b,    \
                                 ldb, beta, c, ldc, ta_len, tb_len);                           \
    }
#define AMXBLAS_CBLAS_GEMM(name, T, I)
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM

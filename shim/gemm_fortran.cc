// The exported Fortran-ABI wrappers (sgemm_, dgemm_, cgemm_, zgemm_ and their _64_ twins),
// generated from shim/routines.def.
#include "shim/gemm_dispatch.h"
#include "shim/real_blas.h"
#include "shim/reentry.h"

namespace amxblas {
namespace {

// A call past the fast path (forwarded_at_once): its record, its decision, its run.
// Out of line, so that the fast path does not pay for this one's frame.
template <typename T, typename Int, typename Forward>
__attribute__((noinline)) unsigned fortran_gemm_decided(Routine r, const char* ta, const char* tb, const Int* m,
                                                    const Int* n, const Int* k, const T* alpha, const T* a,
                                                    const Int* lda, const T* b, const Int* ldb, const T* beta, T* c,
                                                    const Int* ldc, const Forward& forward) {
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
    const kernels::GemmArgs<T> args{*ta, *tb, static_cast<int>(*m), static_cast<int>(*n),
                                    static_cast<int>(*k), *alpha, a, *lda, b, *ldb, *beta, c,
                                    *ldc};
    return dispatch_gemm(rec, args, *m, *n, *k, forward);
}

template <typename T, typename Int>
void fortran_gemm(Routine r, const char* ta, const char* tb, const Int* m, const Int* n,
                  const Int* k, const T* alpha, const T* a, const Int* lda, const T* b,
                  const Int* ldb, const T* beta, T* c, const Int* ldc, std::size_t ta_len,
                  std::size_t tb_len) {
    // The hidden lengths travel unchanged: the real routine may read them.
    auto forward = [&] {
        real<FortranGemmFn<T, Int>>(r)(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                       ta_len, tb_len);
    };
    if (ReentryGuard::held()) return forward();
    unsigned owed_flags = 0;
    {
        ReentryGuard guard;
        say_configuration_warnings();  // the first call of the process tree says them
        if (forwarded_at_once(*m, *n, *k, *alpha)) return forward();
        owed_flags = fortran_gemm_decided(r, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, forward);
    }
    raise_in_caller_environment(owed_flags);  // out of the call: a trap's longjmp leaves nothing held
}

// A 32-bit-integer name (dgemm_) whose real routine takes 64-bit integers, as in an ILP64
// library that keeps the plain names (Debian's libblas64.so.3): the program was built against
// it, so its integers are 64-bit too, and they are read as such (real_blas.h).
template <typename T, typename Int>
void fortran_entry(Routine r, const char* ta, const char* tb, const Int* m, const Int* n,
                   const Int* k, const T* alpha, const T* a, const Int* lda, const T* b,
                   const Int* ldb, const T* beta, T* c, const Int* ldc, std::size_t ta_len,
                   std::size_t tb_len) {
    if constexpr (std::is_same_v<Int, int32_t>) {
        if (real_index_bits(r) == 64) {
            auto wide = [](const int32_t* p) { return reinterpret_cast<const int64_t*>(p); };
            return fortran_gemm<T, int64_t>(r, ta, tb, wide(m), wide(n), wide(k), alpha, a,
                                            wide(lda), b, wide(ldb), beta, c, wide(ldc), ta_len,
                                            tb_len);
        }
    }
    fortran_gemm<T, Int>(r, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ta_len, tb_len);
}

}  // namespace
}  // namespace amxblas

// The scalar and index types named in routines.def, for the generated signatures.
using amxblas::cdouble;
using amxblas::cfloat;

#define AMXBLAS_FORTRAN_GEMM(name, T, Int)                                                     \
    extern "C" __attribute__((visibility("default"))) void name(                               \
        const char* ta, const char* tb, const Int* m, const Int* n, const Int* k,              \
        const T* alpha, const T* a, const Int* lda, const T* b, const Int* ldb,                \
        const T* beta, T* c, const Int* ldc, std::size_t ta_len, std::size_t tb_len) {         \
        amxblas::fortran_entry<T, Int>(amxblas::Routine::name, ta, tb, m, n, k, alpha, a, lda, \
                                       b, ldb, beta, c, ldc, ta_len, tb_len);                  \
    }
#define AMXBLAS_CBLAS_GEMM(name, T, Int)
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM

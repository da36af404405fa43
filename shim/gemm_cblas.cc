// The exported CBLAS wrappers (cblas_sgemm, cblas_dgemm, cblas_cgemm, cblas_zgemm and their _64
// twins), generated from shim/routines.def. A row-major call is the column-major call on
// swapped operands: C^T = op(B)^T * op(A)^T (op = C stays C: (conj(X)^T)^T = conj(X)).
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
T scalar_value(CblasScalar<T> s) {
    if constexpr (is_complex_v<T>) return *s;
    else return s;
}

// A call past the fast path (forwarded_at_once): its record, its decision, its run; returns
// the flags its result owes the caller (dispatch_gemm). Out of line, as fortran_gemm_decided.
template <typename T, typename Int, typename Forward>
__attribute__((noinline)) unsigned cblas_gemm_decided(Routine r, int layout, int transa, int transb, Int m, Int n,
                                                      Int k, CblasScalar<T> alpha, const T* a, Int lda, const T* b,
                                                      Int ldb, CblasScalar<T> beta, T* c, Int ldc,
                                                      const Forward& forward) {
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

    const T al = scalar_value<T>(alpha), be = scalar_value<T>(beta);
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    kernels::GemmArgs<T> args{};
    if (layout == kCblasColMajor) {
        args = {ta, tb, mi, ni, ki, al, a, lda, b, ldb, be, c, ldc};
        return dispatch_gemm(rec, args, m, n, k, forward);
    }
    if (layout == kCblasRowMajor) {
        args = {tb, ta, ni, mi, ki, al, b, ldb, a, lda, be, c, ldc};
        return dispatch_gemm(rec, args, n, m, k, forward);
    }
    args.transa = 0;  // invalid: the policy forwards it and the real cblas_xerbla reports
    return dispatch_gemm(rec, args, m, n, k, forward);
}

template <typename T, typename Int>
void cblas_gemm(Routine r, int layout, int transa, int transb, Int m, Int n, Int k,
                CblasScalar<T> alpha, const T* a, Int lda, const T* b, Int ldb,
                CblasScalar<T> beta, T* c, Int ldc) {
    auto forward = [&] {
        real<CblasGemmFn<T, Int>>(r)(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb,
                                     beta, c, ldc);
    };
    if (ReentryGuard::held()) return forward();
    unsigned owed_flags = 0;
    {
        ReentryGuard guard;
        say_configuration_warnings();  // the first call of the process tree says them
        if (forwarded_at_once<T>(m, n, k, scalar_value<T>(alpha))) return forward();
        owed_flags = cblas_gemm_decided(r, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                        forward);
    }
    raise_in_caller_environment(owed_flags);  // out of the call: a trap's longjmp leaves nothing held
}

// The exported symbols take every integer as a 64-bit register or stack slot. For a 32-bit
// name that is still the caller's ABI (x86-64 System V passes an int in the low half of a
// register or 8-byte slot; the high half is unspecified and dropped here), and it lets a plain
// name whose real routine takes 64-bit integers (an ILP64 library keeping the plain names)
// read them whole (real_blas.h).
template <typename T, typename Int>
void cblas_entry(Routine r, int layout, int transa, int transb, int64_t m, int64_t n,
                 int64_t k, CblasScalar<T> alpha, const T* a, int64_t lda, const T* b,
                 int64_t ldb, CblasScalar<T> beta, T* c, int64_t ldc) {
    if (std::is_same_v<Int, int64_t> || real_index_bits(r) == 64)
        return cblas_gemm<T, int64_t>(r, layout, transa, transb, m, n, k, alpha, a, lda, b, ldb,
                                      beta, c, ldc);
    auto narrow = [](int64_t v) { return static_cast<int32_t>(v); };
    cblas_gemm<T, int32_t>(r, layout, transa, transb, narrow(m), narrow(n), narrow(k), alpha, a,
                           narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

}  // namespace
}  // namespace amxblas

// The scalar and index types named in routines.def, for the generated signatures.
using amxblas::cdouble;
using amxblas::cfloat;
using amxblas::CblasScalar;

#define AMXBLAS_FORTRAN_GEMM(name, T, Int)
#define AMXBLAS_CBLAS_GEMM(name, T, Int)                                                       \
    extern "C" __attribute__((visibility("default"))) void name(                               \
        int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,                   \
        CblasScalar<T> alpha, const T* a, int64_t lda, const T* b, int64_t ldb,                \
        CblasScalar<T> beta, T* c, int64_t ldc) {                                              \
        amxblas::cblas_entry<T, Int>(amxblas::Routine::name, layout, transa, transb, m, n, k,  \
                                     alpha, a, lda, b, ldb, beta, c, ldc);                     \
    }
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM

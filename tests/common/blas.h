/* The BLAS and OpenBLAS entry points the tests call or look up, declared once, for C and C++.
 *
 * Fortran routines carry gfortran's hidden CHARACTER lengths (one size_t per CHARACTER
 * argument); complex scalars and arrays are void*, which keeps this header free of
 * <complex.h>. The integers are int; a program linked with an ILP64 BLAS, whose plain names
 * take 64-bit integers (Debian's -lblas64, -lopenblas64), defines AMXBLAS_TEST_ILP64 before
 * including this. CBLAS calls with 32-bit integers go through the system's <cblas.h>; the
 * cblas_*_fn types are for dlsym() and for the 64-bit interfaces <cblas.h> does not declare.
 * The *_fn types name the routine's function type: `dgemm_fn* f = (dgemm_fn*)dlsym(...)`. */
#ifndef AMXBLAS_TESTS_COMMON_BLAS_H
#define AMXBLAS_TESTS_COMMON_BLAS_H

#include <stddef.h>
#include <stdint.h>

#define AMXBLAS_TEST_FORTRAN_GEMM(fn, T, I)                                                       \
    typedef void fn(const char*, const char*, const I*, const I*, const I*, const T*, const T*,   \
                    const I*, const T*, const I*, const T*, T*, const I*, size_t, size_t)
#define AMXBLAS_TEST_CBLAS_GEMM(fn, T, I) \
    typedef void fn(int, int, int, I, I, I, T, const T*, I, const T*, I, T, T*, I)

AMXBLAS_TEST_FORTRAN_GEMM(sgemm_fn, float, int);
AMXBLAS_TEST_FORTRAN_GEMM(dgemm_fn, double, int);
AMXBLAS_TEST_FORTRAN_GEMM(cgemm_fn, void, int);
AMXBLAS_TEST_FORTRAN_GEMM(zgemm_fn, void, int);
AMXBLAS_TEST_FORTRAN_GEMM(dgemm64_fn, double, int64_t);
AMXBLAS_TEST_FORTRAN_GEMM(zgemm64_fn, void, int64_t);
AMXBLAS_TEST_CBLAS_GEMM(cblas_sgemm_fn, float, int);
AMXBLAS_TEST_CBLAS_GEMM(cblas_dgemm_fn, double, int);
AMXBLAS_TEST_CBLAS_GEMM(cblas_sgemm64_fn, float, int64_t);
AMXBLAS_TEST_CBLAS_GEMM(cblas_dgemm64_fn, double, int64_t);

#undef AMXBLAS_TEST_FORTRAN_GEMM
#undef AMXBLAS_TEST_CBLAS_GEMM

#ifdef __cplusplus
extern "C" {
#endif

#ifndef AMXBLAS_TEST_ILP64
sgemm_fn sgemm_;
dgemm_fn dgemm_;
cgemm_fn cgemm_;
zgemm_fn zgemm_;
#else
dgemm64_fn dgemm_;
zgemm64_fn zgemm_;
cblas_dgemm64_fn cblas_dgemm;
#endif

/* OpenBLAS's own (tests that link it and pin its threads or print its core). */
void openblas_set_num_threads(int);
char* openblas_get_corename(void);

#ifdef __cplusplus
}
#endif

#endif

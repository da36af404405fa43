/* The Fortran BLAS routines the test programs call, with gfortran's hidden CHARACTER lengths. */
#ifndef AMXBLAS_TESTS_FORTRAN_BLAS_H
#define AMXBLAS_TESTS_FORTRAN_BLAS_H

#include <stddef.h>

void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*,
            const int*, size_t, size_t);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, size_t, size_t);

/* Complex: the arguments are float complex / double complex; void* keeps this header free of
 * <complex.h>. */
void cgemm_(const char*, const char*, const int*, const int*, const int*, const void*,
            const void*, const int*, const void*, const int*, const void*, void*, const int*,
            size_t, size_t);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const void*,
            const void*, const int*, const void*, const int*, const void*, void*, const int*,
            size_t, size_t);

#endif

/* Invalid calls, one per parameter the reference BLAS checks: each must reach the real BLAS
 * so that its xerbla reports the same routine and parameter number as without amxblas.
 * The test compares this program's output with and without the library. */
#include <cblas.h>
#include <stdio.h>

#include "../common/blas.h"

int main(void) {
    double a[16] = {0}, b[16] = {0}, c[16] = {0}, one = 1;
    float af[16] = {0}, bf[16] = {0}, cf[16] = {0}, onef = 1;
    const int two = 2, neg = -1, one_i = 1;
    /* TRANSA, TRANSB, M, N, K, LDA, LDB, LDC: parameters 1, 2, 3, 4, 5, 8, 10, 13. */
    dgemm_("X", "N", &two, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1);
    dgemm_("N", "X", &two, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1);
    dgemm_("N", "N", &neg, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1);
    dgemm_("N", "N", &two, &neg, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1);
    dgemm_("N", "N", &two, &two, &neg, &one, a, &two, b, &two, &one, c, &two, 1, 1);
    dgemm_("N", "N", &two, &two, &two, &one, a, &one_i, b, &two, &one, c, &two, 1, 1);
    dgemm_("N", "N", &two, &two, &two, &one, a, &two, b, &one_i, &one, c, &two, 1, 1);
    dgemm_("N", "N", &two, &two, &two, &one, a, &two, b, &two, &one, c, &one_i, 1, 1);
    sgemm_("T", "N", &two, &two, &two, &onef, af, &two, bf, &two, &onef, cf, &one_i, 1, 1);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a, 1, b, 2, 1, c, 2);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, -1, 1, a, 2, b, 2, 1, c, 2);
    cblas_sgemm((CBLAS_ORDER)99, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, af, 2, bf, 2, 1, cf, 2);
    fflush(stdout);
    return 0;
}

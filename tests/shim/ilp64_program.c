/* The 64-bit-integer interfaces, from a C program linked with Debian's ILP64 OpenBLAS
 * (-lopenblas64, which keeps the plain names with 64-bit integers): dgemm_64_, zgemm_64_,
 * cblas_dgemm_64 and cblas_sgemm_64 (provided by libamxblas.so only, hence weak here), and the
 * plain dgemm_ and cblas_dgemm with int64_t arguments, which the library must recognise as
 * ILP64. Small-integer inputs keep every result exact, routed or forwarded, so each call is
 * checked bit for bit against a triple loop. Prints "N passed, N failed". */
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMXBLAS_TEST_ILP64 /* -lopenblas64: the plain names take 64-bit integers */
#include "../common/blas.h"

typedef int64_t i64;
enum { kColMajor = 102, kRowMajor = 101, kNoTrans = 111, kTrans = 112, kConjTrans = 113 };

/* The library's suffixed 64-bit interfaces (weak: the program checks they are there). */
dgemm64_fn dgemm_64_ __attribute__((weak));
zgemm64_fn zgemm_64_ __attribute__((weak));
cblas_dgemm64_fn cblas_dgemm_64 __attribute__((weak));
cblas_sgemm64_fn cblas_sgemm_64 __attribute__((weak));

static int passed, failed;
static void check(int ok, const char* what) {
    if (ok) ++passed;
    else { ++failed; printf("FAIL: %s\n", what); }
}

int main(void) {
    if (!dgemm_64_ || !zgemm_64_ || !cblas_dgemm_64 || !cblas_sgemm_64) {
        printf("FAIL: the _64 symbols are missing: run under LD_PRELOAD=libamxblas.so\n");
        return 1;
    }
    const i64 m = 40, n = 36, k = 44, lda = m + 3, ldb = n + 2, ldc = m + 1;  /* B transposed */
    double *a = malloc(sizeof(double) * lda * k), *b = malloc(sizeof(double) * ldb * k);
    double *want = malloc(sizeof(double) * ldc * n), *c = malloc(sizeof(double) * ldc * n);
    float *af = malloc(sizeof(float) * lda * k), *bf = malloc(sizeof(float) * ldb * k);
    float* cf = malloc(sizeof(float) * ldc * n);
    double complex *az = malloc(sizeof(double complex) * lda * k), *bz = malloc(sizeof(double complex) * ldb * k);
    double complex *cz = malloc(sizeof(double complex) * ldc * n), *wz = malloc(sizeof(double complex) * ldc * n);
    for (i64 i = 0; i < lda * k; ++i) { a[i] = af[i] = (double)((i * 7) % 9 - 4); az[i] = a[i] + I * (double)((i * 5) % 7 - 3); }
    for (i64 i = 0; i < ldb * k; ++i) { b[i] = bf[i] = (double)((i * 5) % 11 - 5); bz[i] = b[i] - I * (double)((i * 3) % 5 - 2); }
    const double alpha = 2, beta = -1;
    const double complex alz = 1 + 2 * I, bez = 0.5 - I;
    for (i64 j = 0; j < n; ++j)
        for (i64 i = 0; i < ldc; ++i) {
            double s = 0;
            double complex sz = 0;
            for (i64 p = 0; p < k && i < m; ++p) {
                s += a[i + p * lda] * b[j + p * ldb];
                sz += az[i + p * lda] * conj(bz[j + p * ldb]);
            }
            const i64 q = i + j * ldc;
            want[q] = i < m ? alpha * s + beta * (double)(q % 5) : (double)(q % 5);
            wz[q] = i < m ? alz * sz + bez * (double)(q % 5) : (double)(q % 5);
        }
    const char* names[] = {"dgemm_64_", "cblas_dgemm_64", "cblas_sgemm_64", "dgemm_ (ILP64)", "cblas_dgemm (ILP64)"};
    for (int r = 0; r < 5; ++r) {
        for (i64 i = 0; i < ldc * n; ++i) c[i] = cf[i] = (double)(i % 5);
        switch (r) {
            case 0: dgemm_64_("N", "T", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1); break;
            case 1: cblas_dgemm_64(kColMajor, kNoTrans, kTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
            case 2: cblas_sgemm_64(kRowMajor, kTrans, kNoTrans, n, m, k, 2.0f, bf, ldb, af, lda, -1.0f, cf, ldc);
                    for (i64 i = 0; i < ldc * n; ++i) c[i] = cf[i];
                    break;
            case 3: dgemm_("N", "T", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1); break;
            case 4: cblas_dgemm(kColMajor, kNoTrans, kTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
        }
        check(memcmp(c, want, sizeof(double) * ldc * n) == 0, names[r]);
    }
    for (i64 i = 0; i < ldc * n; ++i) cz[i] = (double)(i % 5);
    zgemm_64_("N", "C", &m, &n, &k, &alz, az, &lda, bz, &ldb, &bez, cz, &ldc, 1, 1);
    check(memcmp(cz, wz, sizeof(double complex) * ldc * n) == 0, "zgemm_64_");
    printf("%d passed, %d failed\n", passed, failed);
    free(a);
    free(b);
    free(want);
    free(c);
    free(af);
    free(bf);
    free(cf);
    free(az);
    free(bz);
    free(cz);
    free(wz);
    return failed ? 1 : 0;
}

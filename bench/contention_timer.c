/* Times sgemm_ calls of order N, for scripts/bench-contention.sh: linked only with -lblas, so
 * the same binary measures OpenBLAS (plain) and amxblas (under LD_PRELOAD). Prints the median
 * of REPS calls in milliseconds after 3 warm-up calls.
 *   amxblas_contention_timer N REPS [after-strsm]
 * With after-strsm, each call follows (untimed) a STRSM of order N by the real BLAS in the
 * same process, as in a blocked factorisation: the load is then the real BLAS's own threads,
 * which keep spinning for a while after it returns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/common/blas.h"

/* The real BLAS's STRSM (its Fortran interface, with the hidden CHARACTER lengths). */
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const float* alpha, const float* a, const int* lda, float* b, const int* ldb, size_t, size_t, size_t,
            size_t);

static int by_value(const void* x, const void* y) {
    const double a = *(const double*)x, b = *(const double*)y;
    return (a > b) - (a < b);
}

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "after-strsm") == 0)) {
        fprintf(stderr, "usage: amxblas_contention_timer N REPS [after-strsm]\n");
        return 2;
    }
    const int n = atoi(argv[1]), reps = atoi(argv[2]), after_strsm = argc == 4;
    if (n < 1 || reps < 1) return 2;
    float* a = malloc(sizeof(float) * n * n);
    float* b = malloc(sizeof(float) * n * n);
    float* c = malloc(sizeof(float) * n * n);
    double* ms = malloc(sizeof(double) * reps);
    unsigned s = 12345;
    for (long i = 0; i < (long)n * n; ++i) {
        s = s * 1103515245u + 12345u;
        a[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
        b[i] = (float)((s >> 4) % 2001) / 1000.0f - 1.0f;
    }
    /* STRSM's operands: a lower triangle with 4 on the diagonal and entries below 0.002 (well
     * conditioned), and a right-hand side set afresh before each solve. */
    float* t = after_strsm ? calloc((size_t)n * n, sizeof(float)) : NULL;
    float* x = after_strsm ? malloc(sizeof(float) * n * n) : NULL;
    for (long j = 0; t && j < n; ++j)
        for (long i = j; i < n; ++i) t[i + j * n] = i == j ? 4.0f : 0.001f * (float)((i + j) % 3);
    const float one = 1, zero = 0;
    for (int i = 0; i < 3 + reps; ++i) {
        if (after_strsm) {
            for (long q = 0; q < (long)n * n; ++q) x[q] = b[q];
            strsm_("L", "L", "N", "N", &n, &n, &one, t, &n, x, &n, 1, 1, 1, 1);
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (i >= 3) ms[i - 3] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    }
    qsort(ms, reps, sizeof(double), by_value);
    printf("%.4f\n", reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]));
    return 0;
}

/* Times sgemm_ calls of order N, for scripts/bench-contention.sh: linked only with -lblas, so
 * the same binary measures OpenBLAS (plain) and amxblas (under LD_PRELOAD). Prints the median
 * of REPS calls in milliseconds after 3 warm-up calls.
 *   amxblas_contention_timer N REPS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tests/common/blas.h"

static int by_value(const void* x, const void* y) {
    const double a = *(const double*)x, b = *(const double*)y;
    return (a > b) - (a < b);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: amxblas_contention_timer N REPS\n");
        return 2;
    }
    const int n = atoi(argv[1]), reps = atoi(argv[2]);
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
    const float one = 1, zero = 0;
    for (int i = 0; i < 3 + reps; ++i) {
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

/* SGEMM from inside an OpenMP parallel region of 2 threads, then once outside it. The library
 * links no OpenMP runtime (it asks the program's own, shim/openmp.cc), yet must see the region:
 * each call inside runs on 1 thread with note=threads:in-parallel-region, the one outside on
 * the threads configured. Prints "ok" when every C is right. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc, size_t, size_t);

/* C := A*B with A and B all ones: every entry of C is n. */
static int one_call(int n) {
    float* a = malloc(sizeof(float) * n * n);
    float* b = malloc(sizeof(float) * n * n);
    float* c = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; ++i) a[i] = b[i] = 1, c[i] = -1;
    const float one = 1, zero = 0;
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    int bad = 0;
    for (int i = 0; i < n * n; ++i) bad += c[i] != (float)n;
    free(a), free(b), free(c);
    return bad;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 64;
    int bad = 0, threads = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad, threads)
    {
        bad += one_call(n);
        threads += 1;
    }
    bad += one_call(n);
    if (threads != 2 || bad) {
        printf("openmp_program: %d threads, %d wrong entries\n", threads, bad);
        return 1;
    }
    printf("ok\n");
    return 0;
}

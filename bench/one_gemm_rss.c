/* One GEMM call and the process's peak resident memory, for scripts/bench.sh --memory (issue 28):
 * linked with OpenBLAS only, so the same binary measures OpenBLAS alone (plain) and amxblas
 * (under LD_PRELOAD).
 *   amxblas_one_gemm_rss sgemm|dgemm|cgemm|zgemm N [REPS]
 * Allocates A, B and C (N x N, column-major), fills A and B with uniform [-1, 1) values (fixed
 * seed; complex: both parts) and C with zeros, so that every page of the three is resident
 * before the call, makes one call of the Fortran routine ('N', 'N', alpha 1, beta 0) and prints
 *   routine=R n=N peak_kib=P before_kib=B operand_bytes=O openblas_core=CORE
 * P: getrusage's ru_maxrss after the call (KiB); B: the resident set just before the call
 * (/proc/self/statm), which holds the operands and whatever the program had before.
 * With REPS, the call is then made REPS times more and the line ends with call_s=S, the median
 * of their times (bench.sh --compare: the first call is the warm-up). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/blas.h"

static uint64_t state = 0x9e3779b97f4a7c15u;

/* splitmix64, scaled to [-1, 1). */
static double uniform(void) {
    uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* count values of a real (single = 1: float, else double) array. */
static void fill(void* p, size_t count, int single) {
    for (size_t i = 0; i < count; ++i) {
        if (single)
            ((float*)p)[i] = (float)uniform();
        else
            ((double*)p)[i] = uniform();
    }
}

/* The resident set now, in KiB. */
static long rss_kib(void) {
    long pages = -1, resident = -1;
    FILE* f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    if (f) fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void* x, const void* y) {
    const double a = *(const double*)x, b = *(const double*)y;
    return (a > b) - (a < b);
}

static void call(char routine, int n, char* a, char* b, char* c) {
    const double one[2] = {1, 0}, zero[2] = {0, 0};
    const float one_f[2] = {1, 0}, zero_f[2] = {0, 0};
    switch (routine) {
        case 's': sgemm_("N", "N", &n, &n, &n, one_f, (float*)a, &n, (float*)b, &n, zero_f, (float*)c, &n, 1, 1); break;
        case 'd': dgemm_("N", "N", &n, &n, &n, one, (double*)a, &n, (double*)b, &n, zero, (double*)c, &n, 1, 1); break;
        case 'c': cgemm_("N", "N", &n, &n, &n, one_f, a, &n, b, &n, zero_f, c, &n, 1, 1); break;
        case 'z': zgemm_("N", "N", &n, &n, &n, one, a, &n, b, &n, zero, c, &n, 1, 1); break;
    }
}

int main(int argc, char** argv) {
    const char* r = argc == 3 || argc == 4 ? argv[1] : "";
    const int n = argc == 3 || argc == 4 ? atoi(argv[2]) : 0;
    const int reps = argc == 4 ? atoi(argv[3]) : 0;
    const int single = r[0] == 's' || r[0] == 'c', complex = r[0] == 'c' || r[0] == 'z';
    if (n < 1 || reps < 0 || reps > 1000 || strlen(r) != 5 || strcmp(r + 1, "gemm") != 0 || !strchr("sdcz", r[0])) {
        fprintf(stderr, "usage: amxblas_one_gemm_rss sgemm|dgemm|cgemm|zgemm N [REPS]\n");
        return 2;
    }
    const size_t values = (size_t)n * n * (complex ? 2 : 1);  /* real values per operand */
    const size_t bytes = values * (single ? sizeof(float) : sizeof(double));
    char* a = malloc(bytes);
    char* b = malloc(bytes);
    char* c = malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "amxblas_one_gemm_rss: cannot allocate 3 x %zu bytes\n", bytes);
        return 1;
    }
    fill(a, values, single);
    fill(b, values, single);
    /* Written through a volatile pointer page by page, then cleared: a memset of fresh malloc
     * memory alone may be turned into calloc, which leaves the pages untouched. */
    for (size_t i = 0; i < bytes; i += 4096) ((volatile char*)c)[i] = 1;
    memset(c, 0, bytes);

    const long before = rss_kib();
    call(r[0], n, a, b, c);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("routine=%s n=%d peak_kib=%ld before_kib=%ld operand_bytes=%zu openblas_core=%s", r, n, ru.ru_maxrss,
           before, 3 * bytes, openblas_get_corename());
    if (reps > 0) {
        double t[1000];
        for (int q = 0; q < reps; ++q) {
            const double t0 = now_s();
            call(r[0], n, a, b, c);
            t[q] = now_s() - t0;
        }
        qsort(t, (size_t)reps, sizeof t[0], by_value);
        printf(" call_s=%.6f", t[reps / 2]);
    }
    printf("\n");
    free(a);
    free(b);
    free(c);
    return 0;
}

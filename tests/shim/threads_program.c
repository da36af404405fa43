/* Concurrent GEMM calls from several application threads: every result must be right and,
 * checked by the test around it, every log line whole. Linked only with -lblas. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/blas.h"

enum { kThreads = 4, kCallsPerThread = 10 };
static int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int order = 64;

/* A = seed * I (scaled identity), B = small integers: C = seed * B exactly. */
static void* worker(void* arg) {
    const int seed = (int)(long)arg + 1;
    const int n = order;
    const long nn = (long)n * n;
    double* a = calloc(nn, sizeof(double));
    double* b = malloc(nn * sizeof(double));
    double* c = malloc(nn * sizeof(double));
    float* af = calloc(nn, sizeof(float));
    float* bf = malloc(nn * sizeof(float));
    float* cf = malloc(nn * sizeof(float));
    for (int i = 0; i < n; ++i) a[i + (long)i * n] = af[i + (long)i * n] = seed;
    for (long i = 0; i < nn; ++i) b[i] = bf[i] = (double)((i + seed) % 11 - 5);
    const double one = 1, zero = 0;
    const float onef = 1, zerof = 0;
    int bad = 0;
    for (int call = 0; call < kCallsPerThread; ++call) {
        if (call % 2 == 0) {
            dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
            for (long i = 0; i < nn; ++i) bad |= c[i] != seed * b[i];
        } else {
            sgemm_("N", "N", &n, &n, &n, &onef, af, &n, bf, &n, &zerof, cf, &n, 1, 1);
            for (long i = 0; i < nn; ++i) bad |= cf[i] != seed * bf[i];
        }
    }
    pthread_mutex_lock(&lock);
    failures += bad;
    pthread_mutex_unlock(&lock);
    free(a); free(b); free(c); free(af); free(bf); free(cf);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) order = atoi(argv[1]);
    pthread_t t[kThreads];
    for (long i = 0; i < kThreads; ++i) pthread_create(&t[i], NULL, worker, (void*)i);
    for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
    printf("%d passed, %d failed\n", kThreads - failures, failures);
    return failures ? 1 : 0;
}

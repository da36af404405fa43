/* The reference BLAS semantics that must hold whether a call is forwarded or routed:
 *   M = 0 or N = 0: return at once, C untouched;
 *   K = 0 or ALPHA = 0: C := BETA*C (A and B are not read: NaN there must not leak);
 *   BETA = 0: C is overwritten without being read (NaN or Inf already in C must not survive).
 * Linked only with -lblas. "N" is the order of the square cases (256 reaches the emulation
 * when routing is forced on). Prints "N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/blas.h"

static int passed, failed;
static void check(int ok, const char* what) {
    if (ok) ++passed;
    else { ++failed; printf("FAIL: %s\n", what); }
}

#define DEFINE_CASES(T, GEMM, SUFFIX)                                                       \
    static void cases_##SUFFIX(int n) {                                                     \
        const long nn = (long)n * n;                                                        \
        T* a = calloc(nn, sizeof(T));                                                       \
        T* b = calloc(nn, sizeof(T));                                                       \
        T* c = malloc(sizeof(T) * nn);                                                      \
        const T one = 1, zero = 0, two = 2;                                                 \
        const int zero_i = 0;                                                               \
        int ok;                                                                             \
        for (long i = 0; i < nn; ++i) { a[i] = (T)(i % 5) - 2; b[i] = (T)(i % 3) - 1; }     \
        /* M = 0 and N = 0: nothing happens, even to a C full of NaN. */                    \
        for (long i = 0; i < nn; ++i) c[i] = NAN;                                           \
        GEMM("N", "N", &zero_i, &n, &n, &one, a, &n, b, &n, &two, c, &n, 1, 1);             \
        GEMM("N", "N", &n, &zero_i, &n, &one, a, &n, b, &n, &two, c, &n, 1, 1);             \
        ok = 1;                                                                             \
        for (long i = 0; i < nn; ++i) ok &= isnan(c[i]);                                    \
        check(ok, #GEMM " m=0/n=0 leaves C untouched");                                     \
        /* K = 0: C := beta*C. */                                                           \
        for (long i = 0; i < nn; ++i) c[i] = (T)(i % 7);                                    \
        GEMM("N", "N", &n, &n, &zero_i, &one, a, &n, b, &n, &two, c, &n, 1, 1);             \
        ok = 1;                                                                             \
        for (long i = 0; i < nn; ++i) ok &= c[i] == 2 * (T)(i % 7);                          \
        check(ok, #GEMM " k=0 gives beta*C");                                               \
        /* K = 0, beta = 0: C := 0 even where C held NaN. */                                \
        for (long i = 0; i < nn; ++i) c[i] = NAN;                                           \
        GEMM("N", "N", &n, &n, &zero_i, &one, a, &n, b, &n, &zero, c, &n, 1, 1);            \
        ok = 1;                                                                             \
        for (long i = 0; i < nn; ++i) ok &= c[i] == 0;                                      \
        check(ok, #GEMM " k=0 beta=0 overwrites NaN");                                      \
        /* alpha = 0: C := beta*C, and NaN in A is never read. */                           \
        a[0] = NAN;                                                                         \
        for (long i = 0; i < nn; ++i) c[i] = (T)(i % 7);                                    \
        GEMM("N", "N", &n, &n, &n, &zero, a, &n, b, &n, &two, c, &n, 1, 1);                 \
        ok = 1;                                                                             \
        for (long i = 0; i < nn; ++i) ok &= c[i] == 2 * (T)(i % 7);                          \
        check(ok, #GEMM " alpha=0 gives beta*C and does not read A");                       \
        a[0] = -2;                                                                          \
        /* beta = 0: C is overwritten, NaN and Inf in C do not survive. */                  \
        for (long i = 0; i < nn; ++i) c[i] = i % 2 ? NAN : INFINITY;                        \
        GEMM("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);                 \
        ok = 1;                                                                             \
        for (int j = 0; j < n && ok; ++j)                                                   \
            for (int i = 0; i < n; ++i) {                                                   \
                T s = 0;                                                                    \
                for (int p = 0; p < n; ++p) s += a[i + (long)p * n] * b[p + (long)j * n];   \
                if (c[i + (long)j * n] != s) { ok = 0; break; }                             \
            }                                                                               \
        check(ok, #GEMM " beta=0 overwrites NaN/Inf in C");                                 \
        free(a); free(b); free(c);                                                          \
    }

DEFINE_CASES(double, dgemm_, d)
DEFINE_CASES(float, sgemm_, s)

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 256;
    cases_d(n);
    cases_s(n);
    cases_d(3);
    cases_s(3);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

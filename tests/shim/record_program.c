/* GEMM calls for the AMXBLAS_RECORD tests (tests/shim/record_test.sh), every operand stored
 * with padded leading dimensions, so that a recorded file (tight leading dimensions) replays to
 * the same result only if the recorder compacted the stored matrices right. After each call it
 * prints "call I checksum=H": FNV-1a (64-bit) of C's stored entries without the padding, in
 * storage order, the sum amxblas-replay prints for its own C (scripts/replay/blas_call.h).
 *
 * Under forced routing with AMXBLAS_FP64_PRODUCTS=auto on the BF16 engine
 * (AMXBLAS_FP64_ENGINE=bf16; the INT8 engine's auto certifies calls 1 to 3), calls 1, 3 and 4
 * are forwarded with accuracy:uncertified (K = 1, which DGEMM's certificate never passes, and a ZGEMM whose rows
 * and columns spread over 2^45, which 36 products cannot resolve to its bound), call 2 and the
 * FP32 calls are routed, and calls 7 and 8 are beta-scaled (ALPHA = 0 with NaN in A and B,
 * which neither the library nor the recorder reads; K = 0).
 *
 * record_program cap: a small DGEMM, a 300 x 300 x 300 one (2 MiB of operands), a small one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "../common/blas.h"

static int call_number;

static void print_checksum(const void* c, long outer, long inner, long ld, size_t value_bytes) {
    uint64_t h = 14695981039346656037ull;
    const unsigned char* p = c;
    for (long j = 0; j < outer; ++j)
        for (size_t b = 0; b < (size_t)inner * value_bytes; ++b)
            h = (h ^ p[(size_t)j * ld * value_bytes + b]) * 1099511628211ull;
    printf("call %d checksum=%016llx\n", ++call_number, (unsigned long long)h);
}

/* Deterministic values in [-1, 1), different for each seed and index. */
static double value(int seed, long i) {
    uint64_t x = (uint64_t)seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

static double* doubles(long count, int seed) {
    double* v = malloc(count * sizeof(double));
    for (long i = 0; i < count; ++i) v[i] = value(seed, i);
    return v;
}

static float* floats(long count, int seed) {
    float* v = malloc(count * sizeof(float));
    for (long i = 0; i < count; ++i) v[i] = (float)value(seed, i);
    return v;
}

static void small_dgemm(int n) {
    const int ld = n + 3;
    double *a = doubles((long)ld * n, 31), *b = doubles((long)ld * n, 32), *c = doubles((long)ld * n, 33);
    const double alpha = 1.25, beta = -0.5;
    dgemm_("N", "N", &n, &n, &n, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
    print_checksum(c, n, n, ld, sizeof(double));
    free(a); free(b); free(c);
}

static int cap_calls(void) {
    small_dgemm(8);
    small_dgemm(300);
    small_dgemm(8);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "cap")) return cap_calls();

    /* 1. dgemm_ T N, K = 1: stored A is 1 x 5 (LDA 3), B 1 x 4 (LDB 2), C 5 x 4 (LDC 7). */
    {
        const int m = 5, n = 4, k = 1, lda = 3, ldb = 2, ldc = 7;
        double *a = doubles(lda * m, 1), *b = doubles(ldb * n, 2), *c = doubles(ldc * n, 3);
        const double alpha = 0.7, beta = -1.3;
        dgemm_("T", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
        print_checksum(c, n, m, ldc, sizeof(double));
        free(a); free(b); free(c);
    }
    /* 2. dgemm_ N N 16 x 16 x 16, routed. */
    small_dgemm(16);
    /* 3. cblas_dgemm row-major, A no-trans (3 x 1, lda 4), B trans (6 x 1 stored, ldb 5), C 3 x 6
     * (ldc 9); K = 1. */
    {
        const int m = 3, n = 6, k = 1, lda = 4, ldb = 5, ldc = 9;
        double *a = doubles(m * lda, 4), *b = doubles(n * ldb, 5), *c = doubles(m * ldc, 6);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 2.5, a, lda, b, ldb, 0.375, c, ldc);
        print_checksum(c, m, n, ldc, sizeof(double));
        free(a); free(b); free(c);
    }
    /* 4. zgemm_ C N, 6 x 5 x 12: stored A 12 x 6 (LDA 15), B 12 x 5 (LDB 14), C 6 x 5 (LDC 8);
     * even l: |A| ~ 1, |B| ~ 2^-45, odd l the other way round. */
    {
        const int m = 6, n = 5, k = 12, lda = 15, ldb = 14, ldc = 8;
        double *a = doubles(2L * lda * m, 7), *b = doubles(2L * ldb * n, 8), *c = doubles(2L * ldc * n, 9);
        for (int j = 0; j < m; ++j)
            for (int l = 0; l < k; ++l) {
                a[2 * (l + j * lda)] *= l % 2 ? ldexp(1, -45) : 1;
                a[2 * (l + j * lda) + 1] *= l % 2 ? ldexp(1, -45) : 1;
            }
        for (int j = 0; j < n; ++j)
            for (int l = 0; l < k; ++l) {
                b[2 * (l + j * ldb)] *= l % 2 ? 1 : ldexp(1, -45);
                b[2 * (l + j * ldb) + 1] *= l % 2 ? 1 : ldexp(1, -45);
            }
        const double alpha[2] = {0.75, -0.5}, beta[2] = {1.5, 0.25};
        zgemm_("C", "N", &m, &n, &k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
        print_checksum(c, n, 2 * m, ldc * 2, sizeof(double));
        free(a); free(b); free(c);
    }
    /* 5. sgemm_ N T, 7 x 5 x 9: A 7 x 9 (LDA 10), stored B 5 x 9 (LDB 6), C (LDC 11). */
    {
        const int m = 7, n = 5, k = 9, lda = 10, ldb = 6, ldc = 11;
        float *a = floats(lda * k, 10), *b = floats(ldb * k, 11), *c = floats(ldc * n, 12);
        const float alpha = 0.5f, beta = 2.0f;
        sgemm_("N", "T", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
        print_checksum(c, n, m, ldc, sizeof(float));
        free(a); free(b); free(c);
    }
    /* 6. cgemm_ T C, 4 x 6 x 5: stored A 5 x 4 (LDA 7), stored B 6 x 5 (LDB 8), C (LDC 5). */
    {
        const int m = 4, n = 6, k = 5, lda = 7, ldb = 8, ldc = 5;
        float *a = floats(2L * lda * m, 13), *b = floats(2L * ldb * k, 14), *c = floats(2L * ldc * n, 15);
        const float alpha[2] = {1.0f, 0.25f}, beta[2] = {-0.5f, 0.0f};
        cgemm_("T", "C", &m, &n, &k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
        print_checksum(c, n, 2 * m, ldc * 2, sizeof(float));
        free(a); free(b); free(c);
    }
    /* 7. ALPHA = 0, A and B all NaN: C := BETA*C, A and B never read. */
    {
        const int m = 4, n = 3, k = 5, ld = 6;
        double *a = doubles(ld * k, 16), *b = doubles(ld * n, 17), *c = doubles(ld * n, 18);
        for (int i = 0; i < ld * k; ++i) a[i] = NAN;
        for (int i = 0; i < ld * n; ++i) b[i] = NAN;
        const double alpha = 0, beta = 3;
        dgemm_("N", "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);
        print_checksum(c, n, m, ld, sizeof(double));
        free(a); free(b); free(c);
    }
    /* 8. K = 0, A transposed: the stored A has no rows (0 x 3, LDA 1). */
    {
        const int m = 3, n = 2, k = 0, lda = 1, ldb = 1, ldc = 4;
        double a[3] = {1, 2, 3}, b[2] = {4, 5}, *c = doubles(ldc * n, 19);
        const double alpha = 1, beta = -2;
        dgemm_("T", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
        print_checksum(c, n, m, ldc, sizeof(double));
        free(c);
    }
    return 0;
}

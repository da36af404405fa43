/* An ordinary C program, linked only with -lblas: SGEMM and DGEMM through both ABIs
 * (Fortran and CBLAS, both layouts, every transpose pair, padded leading dimensions),
 * checked against a triple loop. Small-integer inputs keep every result exact in BF16
 * emulation too (products and sums stay far below 2^24), so the check is exact whether the
 * call is forwarded or routed. Prints "N passed, N failed" and exits non-zero on a failure. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/blas.h"

static int passed, failed;

static void check(int ok, const char* what) {
    if (ok) ++passed;
    else { ++failed; printf("FAIL: %s\n", what); }
}

/* Element (i, j) of op(X) for a column-major X with leading dimension ld. */
static double at(const double* x, int ld, int trans, int i, int j) {
    return trans ? x[j + (long)i * ld] : x[i + (long)j * ld];
}

static void fill(double* x, long count, int seed) {
    for (long i = 0; i < count; ++i) x[i] = (double)((i * 7 + seed * 13) % 9 - 4);
}

/* One column-major case m x n x k with op transposes, through dgemm_, sgemm_ and
 * cblas (column-major and, by the identity C^T = B^T A^T, row-major). */
static void run_case(int m, int n, int k, int ta, int tb, int pad) {
    const int rows_a = ta ? k : m, cols_a = ta ? m : k;
    const int rows_b = tb ? n : k, cols_b = tb ? k : n;
    const int lda = rows_a + pad, ldb = rows_b + pad, ldc = m + pad;
    double* a = malloc(sizeof(double) * lda * cols_a);
    double* b = malloc(sizeof(double) * ldb * cols_b);
    double* c0 = malloc(sizeof(double) * ldc * n);
    double* want = malloc(sizeof(double) * ldc * n);
    double* c = malloc(sizeof(double) * ldc * n);
    float* af = malloc(sizeof(float) * lda * cols_a);
    float* bf = malloc(sizeof(float) * ldb * cols_b);
    float* cf = malloc(sizeof(float) * ldc * n);
    fill(a, (long)lda * cols_a, 1);
    fill(b, (long)ldb * cols_b, 2);
    fill(c0, (long)ldc * n, 3);
    const double alpha = 2, beta = -1;
    memcpy(want, c0, sizeof(double) * ldc * n);
    /* Every product and partial sum is a small integer, exact in double in any order: the
     * loops run over op(A) copied column by column into opa, a column of sums at a time, which
     * keeps the order-2048 case of shim.gemm_program.auto to about a second. */
    double* opa = malloc(sizeof(double) * ((long)m * k + 1));
    double* sums = malloc(sizeof(double) * (m + 1));
    for (int p = 0; p < k; ++p)
        for (int i = 0; i < m; ++i) opa[i + (long)p * m] = at(a, lda, ta, i, p);
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < m; ++i) sums[i] = 0;
        for (int p = 0; p < k; ++p) {
            const double bpj = at(b, ldb, tb, p, j);
            const double* col = opa + (long)p * m;
            for (int i = 0; i < m; ++i) sums[i] += col[i] * bpj;
        }
        for (int i = 0; i < m; ++i) want[i + (long)j * ldc] = alpha * sums[i] + beta * c0[i + (long)j * ldc];
    }
    free(opa);
    free(sums);
    for (long i = 0; i < (long)lda * cols_a; ++i) af[i] = (float)a[i];
    for (long i = 0; i < (long)ldb * cols_b; ++i) bf[i] = (float)b[i];
    const char tra = ta ? 'T' : 'N', trb = tb ? 'T' : 'N';
    char what[160];
    int ok;

    /* The padding rows of C must survive every call untouched. */
#define CHECK_C(buf, label)                                                     \
    ok = 1;                                                                     \
    for (int j = 0; j < n; ++j)                                                 \
        for (int i = 0; i < ldc; ++i) {                                         \
            const double expect = i < m ? want[i + (long)j * ldc] : c0[i + (long)j * ldc]; \
            if ((double)(buf)[i + (long)j * ldc] != expect) ok = 0;             \
        }                                                                       \
    snprintf(what, sizeof what, "%s m=%d n=%d k=%d trans=%c%c pad=%d", label, m, n, k, tra, \
             trb, pad);                                                         \
    check(ok, what);

    memcpy(c, c0, sizeof(double) * ldc * n);
    dgemm_(&tra, &trb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
    CHECK_C(c, "dgemm_");

    const float alphaf = 2, betaf = -1;
    for (long i = 0; i < (long)ldc * n; ++i) cf[i] = (float)c0[i];
    sgemm_(&tra, &trb, &m, &n, &k, &alphaf, af, &lda, bf, &ldb, &betaf, cf, &ldc, 1, 1);
    CHECK_C(cf, "sgemm_");

    memcpy(c, c0, sizeof(double) * ldc * n);
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    CHECK_C(c, "cblas_dgemm col");

    /* Row-major: the row-major C^T (n x m, ld = ldc) equals the column-major C. */
    memcpy(c, c0, sizeof(double) * ldc * n);
    cblas_dgemm(CblasRowMajor, tb ? CblasTrans : CblasNoTrans, ta ? CblasTrans : CblasNoTrans,
                n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    CHECK_C(c, "cblas_dgemm row");

    for (long i = 0; i < (long)ldc * n; ++i) cf[i] = (float)c0[i];
    cblas_sgemm(CblasRowMajor, tb ? CblasTrans : CblasNoTrans, ta ? CblasTrans : CblasNoTrans,
                n, m, k, alphaf, bf, ldb, af, lda, betaf, cf, ldc);
    CHECK_C(cf, "cblas_sgemm row");

    for (long i = 0; i < (long)ldc * n; ++i) cf[i] = (float)c0[i];
    cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                m, n, k, alphaf, af, lda, bf, ldb, betaf, cf, ldc);
    CHECK_C(cf, "cblas_sgemm col");
#undef CHECK_C
    free(a); free(b); free(c0); free(want); free(c); free(af); free(bf); free(cf);
}

int main(int argc, char** argv) {
    /* Sizes: the default list, or "m n k" triples from the command line. */
    static const int sizes[][3] = {{1, 1, 1}, {2, 3, 4}, {17, 9, 33}, {64, 64, 64},
                                   {33, 40, 257}, {256, 256, 256}};
    if (argc == 4) {
        const int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
        for (int t = 0; t < 4; ++t) run_case(m, n, k, t & 1, t >> 1, 3);
    } else {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (int t = 0; t < 4; ++t) run_case(sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t >> 1, s % 2 ? 5 : 0);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

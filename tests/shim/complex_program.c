/* An ordinary C program, linked only with -lblas: CGEMM and ZGEMM through both ABIs (Fortran
 * and CBLAS, both layouts), every transpose pair of N, T and C, complex ALPHA and BETA, padded
 * leading dimensions, checked entry by entry against a long double triple loop:
 *   |C - Cref| <= tol * (|alpha| (|op(A)| |op(B)|) + |beta| |C0|)  (complex moduli),
 * tol = 1e-5 for CGEMM and 1e-13 for ZGEMM (the FP32 method and FP64 with 21 products both
 * reach about 1e-7 and 1e-16 of that bound on these inputs; a wrong sign or transpose gives
 * errors of order 1). Then the reference BLAS's special cases: M = 0 leaves C untouched,
 * K = 0 and ALPHA = 0 give C := BETA*C without reading A (NaN there) and BETA = 0 overwrites
 * a C full of NaN. The padding rows of C must survive every call. Prints the largest error
 * ratio per routine and "N passed, N failed"; exits non-zero on a failure.
 *   complex_program [M N K]   one more case of that size (e.g. 256 256 256 to reach routing) */
#include <cblas.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/blas.h"
#include "../common/rng.h"

static int passed, failed;
static double worst[6];
static const char* const names[6] = {"cgemm_", "cblas_cgemm(col)", "cblas_cgemm(row)",
                                     "zgemm_", "cblas_zgemm(col)", "cblas_zgemm(row)"};

static void check(int ok, const char* what) {
    if (ok) ++passed;
    else { ++failed; printf("FAIL: %s\n", what); }
}

static amxt_rng g_rng = {12345};
static double uniform(void) { return amxt_rng_uniform(&g_rng); } /* in [-1, 1) */

/* op(X)(i, j) of a column-major complex X. */
static long double complex at(const double complex* x, int ld, char t, int i, int j) {
    const double complex v = t == 'N' ? x[i + (long)j * ld] : x[j + (long)i * ld];
    return t == 'C' ? conj(v) : v;
}

static int trans_enum(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

/* Runs routine r on copies of the inputs, checks the result, returns the worst ratio. */
static void run_one(int r, int m, int n, int k, char ta, char tb, const double complex* a, int lda,
                    const double complex* b, int ldb, const double complex* c0, int ldc, long cols_a,
                    long cols_b, double complex alpha, double complex beta, const long double complex* want,
                    const double* bound) {
    const int single = r < 3;
    const long na = (long)lda * cols_a, nb = (long)ldb * cols_b, nc = (long)ldc * n;
    void* av = malloc(16 * na);
    void* bv = malloc(16 * nb);
    void* cv = malloc(16 * nc);
    float complex *af = av, *bf = bv, *cf = cv;
    double complex *ad = av, *bd = bv, *cd = cv;
    for (long i = 0; i < na; ++i) single ? (void)(af[i] = a[i]) : (void)(ad[i] = a[i]);
    for (long i = 0; i < nb; ++i) single ? (void)(bf[i] = b[i]) : (void)(bd[i] = b[i]);
    for (long i = 0; i < nc; ++i) single ? (void)(cf[i] = c0[i]) : (void)(cd[i] = c0[i]);
    const float complex alf = alpha, bef = beta;
    switch (r) {
        case 0: cgemm_(&ta, &tb, &m, &n, &k, &alf, af, &lda, bf, &ldb, &bef, cf, &ldc, 1, 1); break;
        case 1: cblas_cgemm(CblasColMajor, trans_enum(ta), trans_enum(tb), m, n, k, &alf, af, lda, bf, ldb, &bef, cf, ldc); break;
        case 2: cblas_cgemm(CblasRowMajor, trans_enum(tb), trans_enum(ta), n, m, k, &alf, bf, ldb, af, lda, &bef, cf, ldc); break;
        case 3: zgemm_(&ta, &tb, &m, &n, &k, &alpha, ad, &lda, bd, &ldb, &beta, cd, &ldc, 1, 1); break;
        case 4: cblas_zgemm(CblasColMajor, trans_enum(ta), trans_enum(tb), m, n, k, &alpha, ad, lda, bd, ldb, &beta, cd, ldc); break;
        case 5: cblas_zgemm(CblasRowMajor, trans_enum(tb), trans_enum(ta), n, m, k, &alpha, bd, ldb, ad, lda, &beta, cd, ldc); break;
    }
    const double tol = single ? 1e-5 : 1e-13;
    int ok = 1;
    double ratio = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < ldc; ++i) {
            const long p = i + (long)j * ldc;
            const double complex got = single ? (double complex)cf[p] : cd[p];
            if (i >= m) {  /* padding: untouched, bit for bit */
                const double complex orig = single ? (double complex)(float complex)c0[p] : c0[p];
                ok &= memcmp(&got, &orig, sizeof got) == 0;
                continue;
            }
            const double e = (double)cabsl(got - want[p]) / bound[p];
            if (!(e <= tol)) ok = 0;
            if (e > ratio || e != e) ratio = e;
        }
    if (ratio > worst[r] || ratio != ratio) worst[r] = ratio;
    char what[160];
    snprintf(what, sizeof what, "%s m=%d n=%d k=%d trans=%c%c ratio %.3g", names[r], m, n, k, ta, tb, ratio);
    check(ok, what);
    free(av); free(bv); free(cv);
}

static void run_case(int m, int n, int k, char ta, char tb, int pad) {
    const int rows_a = ta == 'N' ? m : k, cols_a = ta == 'N' ? k : m;
    const int rows_b = tb == 'N' ? k : n, cols_b = tb == 'N' ? n : k;
    const int lda = rows_a + pad, ldb = rows_b + pad, ldc = m + pad;
    double complex* a = malloc(sizeof *a * lda * cols_a);
    double complex* b = malloc(sizeof *b * ldb * cols_b);
    double complex* c0 = malloc(sizeof *c0 * ldc * n);
    long double complex* want = malloc(sizeof *want * ldc * n);
    double* bound = malloc(sizeof *bound * ldc * n);
    /* Values exact in FP32, so both precisions see the same inputs. */
    for (long i = 0; i < (long)lda * cols_a; ++i) a[i] = (float)uniform() + I * (float)uniform();
    for (long i = 0; i < (long)ldb * cols_b; ++i) b[i] = (float)uniform() + I * (float)uniform();
    for (long i = 0; i < (long)ldc * n; ++i) c0[i] = (float)uniform() + I * (float)uniform();
    const double complex alpha = 0.75 - 0.5 * I, beta = -0.25 + 1.0 * I;
    /* op(A) by rows and op(B) by columns, with their moduli, computed once: the same values and
     * the same sums in the same order as reading them in the loop, without its m n k cabsl
     * calls (most of shim.complex_program.square_256's time). */
    long double complex* opa = malloc(sizeof *opa * ((long)m * k + 1));
    long double complex* opb = malloc(sizeof *opb * ((long)k * n + 1));
    long double* abs_opa = malloc(sizeof *abs_opa * ((long)m * k + 1));
    long double* abs_opb = malloc(sizeof *abs_opb * ((long)k * n + 1));
    for (int i = 0; i < m; ++i)
        for (int p = 0; p < k; ++p) {
            opa[p + (long)i * k] = at(a, lda, ta, i, p);
            abs_opa[p + (long)i * k] = cabsl(opa[p + (long)i * k]);
        }
    for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) {
            opb[p + (long)j * k] = at(b, ldb, tb, p, j);
            abs_opb[p + (long)j * k] = cabsl(opb[p + (long)j * k]);
        }
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            long double complex s = 0;
            long double mag = 0;
            const long double complex *x = opa + (long)i * k, *y = opb + (long)j * k;
            const long double *abs_x = abs_opa + (long)i * k, *abs_y = abs_opb + (long)j * k;
            for (int p = 0; p < k; ++p) {
                s += x[p] * y[p];
                mag += abs_x[p] * abs_y[p];
            }
            const long q = i + (long)j * ldc;
            want[q] = alpha * s + beta * c0[q];
            bound[q] = (double)(cabs(alpha) * mag + cabs(beta) * cabs(c0[q]));
            if (bound[q] == 0) bound[q] = 1;
        }
    free(opa); free(opb); free(abs_opa); free(abs_opb);
    for (int r = 0; r < 6; ++r)
        run_one(r, m, n, k, ta, tb, a, lda, b, ldb, c0, ldc, cols_a, cols_b, alpha, beta, want, bound);
    free(a); free(b); free(c0); free(want); free(bound);
}

/* The reference BLAS's special cases for one size (both precisions through the Fortran ABI,
 * and through CBLAS). */
static void special_cases(int n) {
    const long nn = (long)n * n;
    double complex* a = calloc(nn, sizeof *a);
    double complex* b = calloc(nn, sizeof *b);
    double complex* c = malloc(sizeof *c * nn);
    float complex* af = calloc(nn, sizeof *af);
    float complex* bf = calloc(nn, sizeof *bf);
    float complex* cf = malloc(sizeof *cf * nn);
    const double complex one = 1, zero = 0, beta = 2 + 1 * I;
    const float complex onef = 1, zerof = 0, betaf = 2 + 1 * I;
    const int zero_i = 0;
    int ok;
    for (long i = 0; i < nn; ++i) { a[i] = af[i] = (i % 5) - 2 + I * ((i % 3) - 1); b[i] = bf[i] = (i % 3) - 1 - I * (i % 2); }
    /* M = 0: C untouched, even a C full of NaN. */
    for (long i = 0; i < nn; ++i) c[i] = cf[i] = NAN;
    zgemm_("N", "N", &zero_i, &n, &n, &one, a, &n, b, &n, &beta, c, &n, 1, 1);
    cgemm_("C", "N", &n, &zero_i, &n, &onef, af, &n, bf, &n, &betaf, cf, &n, 1, 1);
    ok = 1;
    for (long i = 0; i < nn; ++i) ok &= isnan(creal(c[i])) && isnan(crealf(cf[i]));
    check(ok, "zgemm_/cgemm_ m=0/n=0 leave C untouched");
    /* K = 0 and ALPHA = 0 (with NaN in A): C := BETA*C, exact on small integers. */
    for (int kase = 0; kase < 2; ++kase) {
        const int k = kase == 0 ? 0 : n;
        a[0] = af[0] = kase ? NAN : 1;
        for (long i = 0; i < nn; ++i) c[i] = cf[i] = (i % 7) - 3 + I * (i % 4);
        zgemm_("N", "C", &n, &n, &k, kase ? &zero : &one, a, &n, b, &n, &beta, c, &n, 1, 1);
        cblas_cgemm(CblasRowMajor, CblasConjTrans, CblasTrans, n, n, k, kase ? &zerof : &onef, af, n, bf, n, &betaf, cf, n);
        ok = 1;
        for (long i = 0; i < nn; ++i) {
            const double complex c0 = (i % 7) - 3 + I * (i % 4);
            const double complex w = (2 * creal(c0) - cimag(c0)) + I * (creal(c0) + 2 * cimag(c0));
            ok &= c[i] == w && cf[i] == (float complex)w;
        }
        check(ok, kase ? "alpha=0 gives beta*C and does not read A" : "k=0 gives beta*C");
    }
    a[0] = af[0] = 1;
    /* BETA = 0: C overwritten, NaN and Inf in C do not survive. */
    for (long i = 0; i < nn; ++i) c[i] = cf[i] = i % 2 ? NAN : INFINITY;
    zgemm_("T", "C", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    cblas_cgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, n, n, n, &onef, af, n, bf, n, &zerof, cf, n);
    ok = 1;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double complex s = 0, sf = 0;
            for (int p = 0; p < n; ++p) {
                s += a[p + (long)i * n] * conj(b[j + (long)p * n]);
                sf += conj(a[p + (long)i * n]) * b[p + (long)j * n];
            }
            ok &= c[i + (long)j * n] == s && cf[i + (long)j * n] == (float complex)sf;
        }
    check(ok, "beta=0 overwrites NaN/Inf in C");
    free(a); free(b); free(c); free(af); free(bf); free(cf);
}

int main(int argc, char** argv) {
    static const char t[] = "NTC";
    const int sizes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 45}, {40, 70, 65}};
    for (int s = 0; s < 4; ++s)
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y) run_case(sizes[s][0], sizes[s][1], sizes[s][2], t[x], t[y], 3);
    if (argc > 3)
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y) run_case(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), t[x], t[y], 1);
    special_cases(3);
    special_cases(40);
    for (int r = 0; r < 6; ++r) printf("%-18s max error ratio %.3g\n", names[r], worst[r]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

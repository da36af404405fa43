/* The domain rules end to end, under LD_PRELOAD=libamxblas.so.
 *
 *   LD_PRELOAD=libamxblas.so AMXBLAS_BACKEND=reference AMXBLAS_FP64_PRODUCTS=21 \
 *   AMXBLAS_VERBOSE=2 AMXBLAS_LOG=LOG  policy_domain_preload LOG
 *
 * Each case is one square 256 x 256 x 256 DGEMM or SGEMM (the default AMXBLAS_MIN_N) through the
 * plain dgemm_/sgemm_ symbols, which the preloaded library interposes. An input with one value
 * outside the domain must be forwarded with the expected reason and give exactly what OpenBLAS
 * gives; the reference is computed in this process by OpenBLAS's own dgemm_/sgemm_, found with
 * dlsym on a dlopen handle of libopenblas.so.0 (a plain call would reach the interposer). An
 * in-range DGEMM must be routed (route=fp64-21) and agree with OpenBLAS to FP64 accuracy, an
 * in-range SGEMM (route=fp32) to FP32 accuracy.
 * After every call the last line of LOG tells what the library did. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/blas.h"
#include "../common/rng.h"


enum { N = 256 };

static const char* g_log;
static dgemm_fn* g_ref_dgemm;
static sgemm_fn* g_ref_sgemm;
static int g_failures;

/* The last line of the log, or "" when there is none. */
static void last_log_line(char* out, size_t size) {
    out[0] = '\0';
    FILE* f = fopen(g_log, "r");
    if (!f) return;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "routine=")) snprintf(out, size, "%s", line);
    }
    fclose(f);
}

/* The value of " key=" in line, up to the next blank. */
static void field(const char* line, const char* key, char* out, size_t size) {
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char* p = strstr(line, pat);
    out[0] = '\0';
    if (!p) return;
    p += strlen(pat);
    size_t i = 0;
    while (p[i] && p[i] != ' ' && p[i] != '\n' && i + 1 < size) {
        out[i] = p[i];
        ++i;
    }
    out[i] = '\0';
}

static amxt_rng g_rng = {88172645463325252ull};
static double uniform(void) { return amxt_rng_uniform(&g_rng); } /* [-1, 1) */

/* Checks the log's verdict on the call just made; want_reason NULL means routed as want_route. */
static int check_log(const char* name, const char* want_route, const char* want_reason) {
    char line[2048], route[64], reason[64];
    last_log_line(line, sizeof line);
    if (!line[0]) {
        printf("FAIL %s: no log line in %s (is libamxblas.so preloaded?)\n", name, g_log);
        return 0;
    }
    field(line, "route", route, sizeof route);
    field(line, "reason", reason, sizeof reason);
    if (want_reason) {
        if (strcmp(route, "forward") != 0 || strcmp(reason, want_reason) != 0) {
            printf("FAIL %s: expected route=forward reason=%s, got route=%s reason=%s\n", name,
                   want_reason, route, reason[0] ? reason : "(none)");
            return 0;
        }
    } else if (strcmp(route, want_route) != 0) {
        printf("FAIL %s: expected route=%s, got route=%s reason=%s%s\n", name, want_route, route,
               reason[0] ? reason : "(none)",
               strncmp(reason, "domain:", 7) && reason[0] ? " (the kernels did not run it)" : "");
        return 0;
    }
    return 1;
}

/* One DGEMM: A, B uniform in [-1, 1), C = 0.5 (beta = 0.25), A[bad_at] = bad when bad_at >= 0. */
static void dgemm_case(const char* name, int bad_at, double bad, double alpha,
                       const char* want_reason) {
    const int n = N;
    const double beta = 0.25;
    double* a = malloc(sizeof(double) * N * N);
    double* b = malloc(sizeof(double) * N * N);
    double* c = malloc(sizeof(double) * N * N);
    double* r = malloc(sizeof(double) * N * N);
    for (int i = 0; i < N * N; ++i) {
        a[i] = uniform();
        b[i] = uniform();
        c[i] = r[i] = 0.5;
    }
    if (bad_at >= 0) a[bad_at] = bad;
    dgemm_("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n, 1, 1);
    g_ref_dgemm("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, r, &n, 1, 1);
    int ok = check_log(name, "fp64-21", want_reason);
    if (ok && want_reason && memcmp(c, r, sizeof(double) * N * N) != 0) {
        printf("FAIL %s: forwarded, but C differs from OpenBLAS's\n", name);
        ok = 0;
    }
    if (ok && !want_reason) {
        double worst = 0;
        for (int i = 0; i < N * N; ++i) {
            const double e = fabs(c[i] - r[i]) / (fabs(r[i]) > 1 ? fabs(r[i]) : 1);
            if (!(e <= worst)) worst = e;
        }
        /* |A||B| <= N per entry (times the one outsized entry's row); FP64-21 is about 1e-15
           relative to it (the paper, arXiv:2609.04663, Table 4; tests/common/table4.h). */
        if (!(worst <= 1e-12)) {
            printf("FAIL %s: routed, max |C - C_openblas| = %.3g\n", name, worst);
            ok = 0;
        }
    }
    printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    g_failures += !ok;
    free(a);
    free(b);
    free(c);
    free(r);
}

/* One SGEMM like dgemm_case; want_reason NULL: routed as fp32 and FP32-accurate. */
static void sgemm_case(const char* name, int bad_at, float bad, const char* want_reason) {
    const int n = N;
    const float alpha = 1.0f, beta = 0.25f;
    float* a = malloc(sizeof(float) * N * N);
    float* b = malloc(sizeof(float) * N * N);
    float* c = malloc(sizeof(float) * N * N);
    float* r = malloc(sizeof(float) * N * N);
    for (int i = 0; i < N * N; ++i) {
        a[i] = (float)uniform();
        b[i] = (float)uniform();
        c[i] = r[i] = 0.5f;
    }
    if (bad_at >= 0) a[bad_at] = bad;
    sgemm_("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n, 1, 1);
    g_ref_sgemm("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, r, &n, 1, 1);
    int ok = check_log(name, "fp32", want_reason);
    if (ok && want_reason && memcmp(c, r, sizeof(float) * N * N) != 0) {
        printf("FAIL %s: forwarded, but C differs from OpenBLAS's\n", name);
        ok = 0;
    }
    if (ok && !want_reason) {
        double worst = 0;
        for (int i = 0; i < N * N; ++i) {
            const double e = fabs((double)c[i] - (double)r[i]);
            if (!(e <= worst)) worst = e;
        }
        /* |A||B| <= N per entry; FP32-level accuracy is a few 1e-7 relative to it. */
        if (!(worst <= 1e-4)) {
            printf("FAIL %s: routed, max |C - C_openblas| = %.3g\n", name, worst);
            ok = 0;
        }
    }
    printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    g_failures += !ok;
    free(a);
    free(b);
    free(c);
    free(r);
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LOG (the AMXBLAS_LOG file)\n", argv[0]);
        return 2;
    }
    g_log = argv[1];
    remove(g_log);
    void* openblas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!openblas) {
        fprintf(stderr, "cannot dlopen libopenblas.so.0: %s\n", dlerror());
        return 2;
    }
    g_ref_dgemm = (dgemm_fn*)dlsym(openblas, "dgemm_");
    g_ref_sgemm = (sgemm_fn*)dlsym(openblas, "sgemm_");
    if (!g_ref_dgemm || !g_ref_sgemm || g_ref_dgemm == dgemm_ || g_ref_sgemm == sgemm_) {
        fprintf(stderr, "OpenBLAS's own dgemm_/sgemm_ not found apart from the interposer\n");
        return 2;
    }
    const double nan = NAN, inf = INFINITY;
    dgemm_case("dgemm one NaN", 1000, nan, 1.0, "domain:nonfinite");
    dgemm_case("dgemm one -Inf", N * N - 1, -inf, 1.0, "domain:nonfinite");
    /* Outside BF16's range: routed since the FP64 split scales each row and column exactly. */
    dgemm_case("dgemm one FP64 subnormal", 77, 1e-310, 1.0, NULL);
    dgemm_case("dgemm one value below 2^-126", 77, 0x1p-127, 1.0, NULL);
    dgemm_case("dgemm one huge value", 5, 1e300, 1.0, NULL);
    dgemm_case("dgemm one value with bits below 2^-126", 300, 0x1p-100 + 0x1p-140, 1.0, NULL);
    dgemm_case("dgemm NaN alpha", -1, 0, nan, "domain:nonfinite-scalar");
    sgemm_case("sgemm one NaN", 3, (float)nan, "domain:nonfinite");
    sgemm_case("sgemm one +Inf", 4, (float)inf, "domain:nonfinite");
    sgemm_case("sgemm one FP32 subnormal", 5, 1e-40f, "domain:too-small");
    sgemm_case("sgemm one value below 2^-103", 5, 0x1p-104f, "domain:too-small");
    sgemm_case("sgemm one huge value", 6, 3e38f, "domain:overflow-risk");
    dgemm_case("dgemm in range (routed)", -1, 0, 1.0, NULL);
    sgemm_case("sgemm in range (routed)", -1, 0, NULL);
    printf("%d failure(s)\n", g_failures);
    return g_failures ? 1 : 0;
}

/* A program with no BLAS of its own: it finds dgemm_ and sgemm_ at run time, as a plugin host
 * would, so under LD_PRELOAD it reaches libamxblas.so, which must then load its fallback BLAS.
 * Its integers are 32-bit (LP64). Exits 77 (skip) when run without the library. */
#include <dlfcn.h>
#include <stdio.h>

#include "../common/blas.h"

int main(void) {
    dgemm_fn* dgemm = (dgemm_fn*)dlsym(RTLD_DEFAULT, "dgemm_");
    sgemm_fn* sgemm = (sgemm_fn*)dlsym(RTLD_DEFAULT, "sgemm_");
    if (!dgemm || !sgemm) {
        printf("no dgemm_ in the process: run under LD_PRELOAD=libamxblas.so\n");
        return 77;
    }
    const int n = 2;
    const double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, one = 1, zero = 0;
    double c[4] = {-1, -1, -1, -1};
    dgemm("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    /* Column-major: C = [1 3; 2 4] * [5 7; 6 8] = [23 31; 34 46]. */
    const int ok = c[0] == 23 && c[1] == 34 && c[2] == 31 && c[3] == 46;
    printf("%s: C = %g %g %g %g\n", ok ? "ok" : "WRONG", c[0], c[1], c[2], c[3]);
    /* A second plain routine: whatever the library says about the fallback, it says once. */
    const float sa[4] = {1, 2, 3, 4}, sb[4] = {5, 6, 7, 8}, sone = 1, szero = 0;
    float sc[4] = {-1, -1, -1, -1};
    sgemm("N", "N", &n, &n, &n, &sone, sa, &n, sb, &n, &szero, sc, &n, 1, 1);
    const int sok = sc[0] == 23 && sc[1] == 34 && sc[2] == 31 && sc[3] == 46;
    printf("%s: sgemm C = %g %g %g %g\n", sok ? "ok" : "WRONG", sc[0], sc[1], sc[2], sc[3]);
    return ok && sok ? 0 : 1;
}

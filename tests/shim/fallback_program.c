/* A program with no BLAS of its own: it finds dgemm_ at run time, as a plugin host would, so
 * under LD_PRELOAD it reaches libamxblas.so, which must then load its fallback BLAS.
 * Exits 77 (skip) when run without the library. */
#include <dlfcn.h>
#include <stdio.h>

#include "../common/blas.h"

int main(void) {
    dgemm_fn* dgemm = (dgemm_fn*)dlsym(RTLD_DEFAULT, "dgemm_");
    if (!dgemm) {
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
    return ok ? 0 : 1;
}

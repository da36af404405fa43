/* A program linked with Debian's ILP64 BLAS (-lblas64: its dgemm_ takes 64-bit integers),
 * calling DGEMM with a leading dimension that does not fit in 32 bits: LDA = 2^31 + 32. A is
 * a MAP_NORESERVE mapping of LDA * (K - 1) + M doubles (about 34 GB of address space), of
 * which only the K columns' pages are touched. A 32-bit reading of LDA would be 32 (too
 * small, an XERBLA) and of M, N, K their low halves; the library must read all of them whole,
 * route or forward the call, and give the exact result (small integers), as without it.
 * Prints the result's checksum and "ok", or "FAIL". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define AMXBLAS_TEST_ILP64 /* -lblas64: dgemm_ takes 64-bit integers */
#include "../common/blas.h"

typedef int64_t i64;

int main(void) {
    const i64 m = 64, n = 48, k = 3, lda = ((i64)1 << 31) + 32, ldb = k, ldc = m;
    const size_t bytes = sizeof(double) * (size_t)(lda * (k - 1) + m);
    double* a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    double b[3 * 48], c[64 * 48], want[64 * 48];
    for (i64 p = 0; p < k; ++p)
        for (i64 i = 0; i < m; ++i) a[i + p * lda] = (double)((i * 3 + p * 5) % 7 - 3);
    for (i64 i = 0; i < k * n; ++i) b[i] = (double)((i * 5) % 9 - 4);
    for (i64 j = 0; j < n; ++j)
        for (i64 i = 0; i < m; ++i) {
            double s = 0;
            for (i64 p = 0; p < k; ++p) s += a[i + p * lda] * b[p + j * ldb];
            want[i + j * ldc] = 2 * s - (double)((i + j) % 3);
            c[i + j * ldc] = (double)((i + j) % 3);
        }
    const double alpha = 2, beta = -1;
    dgemm_("N", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
    uint64_t h = 1469598103934665603ull;
    const unsigned char* bytes_c = (const unsigned char*)c;
    for (size_t i = 0; i < sizeof c; ++i) h = (h ^ bytes_c[i]) * 1099511628211ull;
    printf("checksum=%016llx\n", (unsigned long long)h);
    if (memcmp(c, want, sizeof c) != 0) {
        printf("FAIL: C differs from the exact result\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}

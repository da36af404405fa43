/* A program that closes the library's log descriptor and opens a file of its own on the same
 * number (issue 27, item 11: the library's log lines then landed in the program's file). It
 * makes one DGEMM call (the library opens AMXBLAS_LOG), finds the log's descriptor in
 * /proc/self/fd, closes it, opens its own file there, writes one line, makes three more calls
 * and checks that its file holds only its own line. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/blas.h"

static void call_dgemm(void) {
    const int n = 2;
    const double a[4] = {1, 2, 3, 4}, one = 1, zero = 0;
    double c[4];
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n, 1, 1);
}

/* The descriptor open on PATH, or -1. */
static int fd_of(const char* path) {
    char want[PATH_MAX], link[64], got[PATH_MAX];
    if (!realpath(path, want)) return -1;
    for (int fd = 0; fd < 1024; ++fd) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        const ssize_t n = readlink(link, got, sizeof got - 1);
        if (n <= 0) continue;
        got[n] = '\0';
        if (strcmp(got, want) == 0) return fd;
    }
    return -1;
}

int main(void) {
    const char* log = getenv("AMXBLAS_LOG");
    if (!log) {
        printf("AMXBLAS_LOG is not set\n");
        return 2;
    }
    call_dgemm();
    const int log_fd = fd_of(log);
    if (log_fd < 0) {
        printf("WRONG: no descriptor is open on %s after the first call\n", log);
        return 2;
    }
    close(log_fd);
    /* mkstemp template, relative: the file goes in CTest's working directory (this test's build
     * folder) and is removed below. */
    char own[] = "log_fd_program.XXXXXX";
    int fd = mkstemp(own);
    if (fd >= 0 && fd != log_fd) {
        dup2(fd, log_fd);
        close(fd);
    }
    fd = log_fd;
    static const char mine[] = "the program's own line\n";
    if (write(fd, mine, sizeof mine - 1) != (ssize_t)(sizeof mine - 1)) return 2;
    for (int i = 0; i < 3; ++i) call_dgemm();
    char got[4096];
    const ssize_t n = pread(fd, got, sizeof got - 1, 0);
    close(fd);
    unlink(own);
    got[n > 0 ? n : 0] = '\0';
    if (strcmp(got, mine) != 0) {
        printf("WRONG: the program's file (descriptor %d) holds:\n%s", log_fd, got);
        return 1;
    }
    printf("ok: the program's file (descriptor %d) holds only its own line\n", log_fd);
    return 0;
}

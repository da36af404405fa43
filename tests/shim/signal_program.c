/* Routed GEMM calls until a signal ends the program (issue 14: the AMXBLAS_VERBOSE=1 summary
 * was lost when SIGTERM, SIGINT or SIGHUP ended a run). Prints "ready" after its first call;
 * signal_test.sh then sends the signal.
 *   signal_program default     no handler of its own: the signal's default action ends it
 *   signal_program own-before  its own SIGTERM handler, installed before the first call
 *                              (prints, exits with status 7)
 *   signal_program own-after   its own SIGTERM handler, installed after the first call (sets a
 *                              flag; the program then returns from main normally)
 *   signal_program ignore-hup  SIGHUP ignored before the first call (as under nohup) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/blas.h"

static volatile sig_atomic_t g_stop;

static void exit_7(int sig) {
    static const char msg[] = "program handler ran\n";
    (void)sig;
    if (write(STDOUT_FILENO, msg, sizeof msg - 1) < 0) _exit(8);
    _exit(7);
}

static void set_stop(int sig) {
    (void)sig;
    g_stop = 1;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "default";
    const int n = 256;
    const float one = 1, zero = 0;
    float* a = calloc((size_t)n * n, sizeof(float));
    float* c = calloc((size_t)n * n, sizeof(float));
    for (int i = 0; i < n; ++i) a[i + i * n] = 1;
    if (strcmp(mode, "own-before") == 0) signal(SIGTERM, exit_7);
    if (strcmp(mode, "ignore-hup") == 0) signal(SIGHUP, SIG_IGN);
    for (long call = 0; !g_stop && call < 100000; ++call) {
        sgemm_("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n, 1, 1);
        if (c[0] != 1) {
            free(a);
            free(c);
            return 3;
        }
        if (call == 0) {
            if (strcmp(mode, "own-after") == 0) signal(SIGTERM, set_stop);
            printf("ready\n");
            fflush(stdout);
        }
        if (strcmp(mode, "ignore-hup") == 0 && call == 20) break;
    }
    printf("%s\n", g_stop ? "stopped by the program's flag" : "finished");
    free(a);
    free(c);
    return 0;
}

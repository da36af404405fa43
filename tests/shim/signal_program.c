/* Routed GEMM calls until a signal ends the program (issue 14: the AMXBLAS_VERBOSE=1 summary
 * was lost when SIGTERM, SIGINT or SIGHUP ended a run). Prints "ready" after its first call;
 * signal_test.sh then sends the signal.
 *   signal_program default     no handler of its own: the signal's default action ends it
 *   signal_program own-before  its own SIGTERM handler, installed before the first call
 *                              (prints, exits with status 7)
 *   signal_program own-after   its own SIGTERM handler, installed after the first call (sets a
 *                              flag; the program then returns from main normally)
 *   signal_program ignore-hup  SIGHUP ignored before the first call (as under nohup)
 *   signal_program first-call  prints "ready" before its first call, one long routed call
 *                              (issue 27, item 13: a signal during it gave no summary)
 *   signal_program query       its own SIGTERM handler, installed before the first call; after
 *                              the calls it checks that sigaction() and signal() report its
 *                              own dispositions (SIGTERM its handler, SIGINT and SIGHUP the
 *                              default), then raises SIGINT, whose default action ends it */
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

static int is_default(const struct sigaction* sa) {
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

/* Every disposition as the program set it, whatever the library does; 0 when so. */
static int check_dispositions(void) {
    struct sigaction term, intr, hup;
    sigaction(SIGTERM, NULL, &term);
    sigaction(SIGINT, NULL, &intr);
    sigaction(SIGHUP, NULL, &hup);
    int bad = 0;
    if ((term.sa_flags & SA_SIGINFO) || term.sa_handler != exit_7 || !(term.sa_flags & SA_RESETHAND) ||
        !sigismember(&term.sa_mask, SIGUSR1)) {
        printf("WRONG: sigaction(SIGTERM) does not report the program's handler, flags and mask\n");
        bad = 1;
    }
    if (!is_default(&intr) || !is_default(&hup)) {
        printf("WRONG: sigaction(SIGINT/SIGHUP) does not report the default action\n");
        bad = 1;
    }
    /* signal() sets the default again and reports the previous one: the default. */
    if (signal(SIGHUP, SIG_DFL) != SIG_DFL) {
        printf("WRONG: signal(SIGHUP) does not report the default action\n");
        bad = 1;
    }
    /* Setting a handler and the default again: the default is reported. */
    struct sigaction mine = {0}, prev;
    mine.sa_handler = set_stop;
    sigaction(SIGINT, &mine, &prev);
    sigaction(SIGINT, &prev, NULL);
    sigaction(SIGINT, NULL, &intr);
    if (!is_default(&prev) || !is_default(&intr)) {
        printf("WRONG: SIGINT's default action is not reported after a handler came and went\n");
        bad = 1;
    }
    return bad;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "default";
    if (strcmp(mode, "first-call") == 0) {
        /* One call long enough for the signal to arrive while it runs (signal_test.sh sends it
         * 1 s after "ready"): order 2048 takes seconds on the scalar reference backend, but
         * 0.5 s on the avx512 one (2 threads, Zen 5), where order 4096 takes about 4 s. */
        const char* backend = getenv("AMXBLAS_BACKEND");
        const int big = backend && strcmp(backend, "reference") == 0 ? 2048 : 4096;
        const float one = 1, zero = 0;
        float* a = calloc((size_t)big * big, sizeof(float));
        float* c = calloc((size_t)big * big, sizeof(float));
        printf("ready\n");
        fflush(stdout);
        sgemm_("N", "N", &big, &big, &big, &one, a, &big, a, &big, &zero, c, &big, 1, 1);
        printf("the first call ended before the signal came\n");
        free(a);
        free(c);
        return 0;
    }
    if (strcmp(mode, "query") == 0) {
        struct sigaction own = {0};
        own.sa_handler = exit_7;
        own.sa_flags = SA_RESETHAND;
        sigemptyset(&own.sa_mask);
        sigaddset(&own.sa_mask, SIGUSR1);
        sigaction(SIGTERM, &own, NULL);
    }
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
        if (strcmp(mode, "query") == 0 && call == 3) {
            const int bad = check_dispositions();
            printf("%s\n", bad ? "the program does not see its own dispositions" : "ok: the program sees its own dispositions");
            fflush(stdout);
            if (bad) return 4;
            raise(SIGINT);
            return 5;
        }
    }
    printf("%s\n", g_stop ? "stopped by the program's flag" : "finished");
    free(a);
    free(c);
    return 0;
}

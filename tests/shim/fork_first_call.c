/* fork_first_call: fork() while another thread is inside the process's first routed call.
 *
 * The first routed call of a process initialises the library's lazy state (settings, the
 * hardware facts, the kernel tables, the workspace pool, the thread pool's handlers). A
 * function-local static is initialised under a guard that fork() knows nothing about: a child
 * forked while another thread holds one inherits it "in progress" and hangs on its own first
 * call (kernels/driver/process_state.h says how the library prevents it).
 *
 * Each trial is a fresh process (forked from this one, which never calls the BLAS, so nothing
 * lazy is initialised in it): a thread starts a routed SGEMM of order 512, the trial's main
 * thread waits d microseconds and forks, and the grandchild makes a routed call of order 64,
 * which must finish (alarm after 20 s) and be exact. The delays sweep 0 to 1.5 ms, where the
 * first call's initialisation is, in steps of 12.5 us. Against the library before the fix, 3 runs
 * of this program out of 3 failed (children hung at delays 0, 12 and 137 us: the real BLAS's
 * resolution and the workspace pool's creation).
 *
 * Exit status 0 when every trial passed; 1 with the failing delay printed otherwise. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/blas.h"

enum { kBig = 512, kSmall = 64, kTrials = 120 };

static float *a, *b, *c_big, *c_small;
static volatile int g_started;

static void* big_call(void* unused) {
    (void)unused;
    const int n = kBig;
    const float one = 1, zero = 0;
    g_started = 1;
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c_big, &n, 1, 1);
    return NULL;
}

/* The grandchild: one small routed call, checked exactly (small integers are exact in the
 * BF16 slices and in FP32). */
static int small_call_ok(void) {
    const int n = kSmall;
    const float one = 1, zero = 0;
    memset(c_small, 0xff, sizeof(float) * n * n);
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c_small, &n, 1, 1);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int l = 0; l < n; ++l) s += (double)a[i + l * n] * b[l + j * n];
            if (c_small[i + j * n] != s) return 0;
        }
    return 1;
}

/* One trial, in a fresh process: 0 when the grandchild finished and was exact. */
static int trial(int delay_us) {
    pthread_t t;
    pthread_create(&t, NULL, big_call, NULL);
    while (!g_started) {
    }
    if (delay_us > 0) usleep(delay_us);
    const pid_t child = fork();
    if (child == 0) {
        alarm(20); /* a hang ends in SIGALRM */
        _exit(small_call_ok() ? 0 : 1);
    }
    int st = 0;
    waitpid(child, &st, 0);
    pthread_join(t, NULL);
    if (WIFSIGNALED(st)) {
        printf("delay %d us: the child forked mid-first-call was killed by signal %d (%s)\n", delay_us,
               WTERMSIG(st), WTERMSIG(st) == SIGALRM ? "hung" : "crashed");
        return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("delay %d us: the child's call was wrong (status %d)\n", delay_us, st);
        return 1;
    }
    return 0;
}

int main(void) {
    const size_t big = (size_t)kBig * kBig;
    a = malloc(sizeof(float) * big);
    b = malloc(sizeof(float) * big);
    c_big = malloc(sizeof(float) * big);
    c_small = malloc(sizeof(float) * kSmall * kSmall);
    for (size_t i = 0; i < big; ++i) {
        a[i] = (float)((int)(i % 7) - 3);
        b[i] = (float)((int)(i % 5) - 2);
    }
    int failed = 0;
    for (int q = 0; q < kTrials && !failed; ++q) {
        const int delay_us = q * 25 / 2;
        fflush(stdout);
        const pid_t p = fork();
        if (p == 0) {
            const int rc = trial(delay_us);
            fflush(stdout);
            _exit(rc);
        }
        int st = 0;
        waitpid(p, &st, 0);
        failed = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    printf("%s: %d trials, fork 0 to %d us into a process's first routed call\n", failed ? "FAILED" : "passed",
           kTrials, (kTrials - 1) * 25 / 2);
    free(a);
    free(b);
    free(c_big);
    free(c_small);
    return failed;
}

/* GEMM calls across fork(), linked only with -lblas (issue 14: a forked child's first routed call
 * used to wait forever for OpenMP threads that fork does not copy).
 *   fork_program tree      routed call; fork; calls in the parent, the child and a grandchild;
 *                          one more child that makes no call at all
 *   fork_program mid-call  a second thread is inside a routed call when the main thread forks;
 *                          the child's calls must not count it (no note=threads:concurrent-calls)
 *   fork_program early     fork before the process's first call, then one call in the child and
 *                          one in the parent, routed or not (the configuration's warnings must
 *                          come once: tests/shim/CMakeLists.txt, shim.warnings.*)
 * Every product is checked exactly (small integers: exact in BF16 slices and in FP32), and every
 * process that made a routed call checks that it has a thread of the library's pool of its own
 * (named amxblas-worker: made in that process, since fork copies only the calling thread).
 * The test around it (tests/shim/CMakeLists.txt) runs it under `timeout` and counts log lines. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/blas.h"

static float *a, *b, *c;

static void fill(int n) {
    a = malloc(sizeof(float) * n * n);
    b = malloc(sizeof(float) * n * n);
    c = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; ++i) {
        a[i] = (float)(i % 7 - 3);
        b[i] = (float)(i % 5 - 2);
    }
}

/* C = A * B for order n, checked against a plain loop; 0 when exact. */
static int gemm_ok(int n, const char* who) {
    const float one = 1, zero = 0;
    memset(c, 0xff, sizeof(float) * n * n); /* NaN: a skipped write cannot pass */
    sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    for (int j = 0; j < n; j += 37)
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int l = 0; l < n; ++l) s += (double)a[i + l * n] * b[l + j * n];
            if (c[i + j * n] != s) {
                printf("%s: C(%d,%d) = %g, expected %g\n", who, i, j, c[i + j * n], s);
                return 0;
            }
        }
    return 1;
}

/* Whether this process has a thread named amxblas-worker. */
static int has_pool_worker(void) {
    DIR* d = opendir("/proc/self/task");
    if (!d) return 0;
    int found = 0;
    struct dirent* e;
    while (!found && (e = readdir(d))) {
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE* f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof name, f)) found = strncmp(name, "amxblas-worker", 14) == 0;
        fclose(f);
    }
    closedir(d);
    return found;
}

static int calls_ok(int n, int calls, const char* who) {
    for (int i = 0; i < calls; ++i)
        if (!gemm_ok(n, who)) return 0;
    if (!has_pool_worker()) {
        printf("%s: no amxblas-worker thread after a routed call\n", who);
        return 0;
    }
    printf("%s: %d calls ok\n", who, calls);
    fflush(stdout);
    return 1;
}

static int wait_ok(pid_t p, const char* who) {
    int st = 0;
    if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("%s failed (status %d)\n", who, st);
        return 0;
    }
    return 1;
}

static int tree(int n) {
    if (!calls_ok(n, 1, "parent before fork")) return 1;
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
        int ok = calls_ok(n, 2, "child");
        const pid_t grandchild = fork();
        if (grandchild == 0) exit(calls_ok(n, 2, "grandchild") ? 0 : 1);
        ok = wait_ok(grandchild, "grandchild") && ok;
        exit(ok ? 0 : 1);
    }
    /* A child that makes no call: it must write no summary of its own. */
    const pid_t idle = fork();
    if (idle == 0) exit(0);
    int ok = calls_ok(n, 1, "parent after fork");
    ok = wait_ok(child, "child") && ok;
    ok = wait_ok(idle, "idle child") && ok;
    return ok ? 0 : 1;
}

static volatile int g_in_call, g_call_done;

static void* long_call(void* arg) {
    const int n = (int)(long)arg;
    float* x = calloc((size_t)n * n, sizeof(float));
    float* y = calloc((size_t)n * n, sizeof(float));
    const float one = 1, zero = 0;
    g_in_call = 1;
    sgemm_("N", "N", &n, &n, &n, &one, x, &n, x, &n, &zero, y, &n, 1, 1);
    g_call_done = 1;
    free(x);
    free(y);
    return NULL;
}

static int mid_call(int n) {
    /* Up to 5 tries: a try counts when the call was still running at fork() (the child's copy
     * of g_call_done says so). 1024^3 takes far longer than the 2 ms we wait. */
    for (int attempt = 0; attempt < 5; ++attempt) {
        g_in_call = g_call_done = 0;
        pthread_t t;
        pthread_create(&t, NULL, long_call, (void*)1024L);
        while (!g_in_call) usleep(100);
        usleep(2000);
        fflush(stdout);
        const pid_t child = fork();
        if (child == 0) {
            if (g_call_done) _exit(3); /* inconclusive: the call had ended */
            _exit(calls_ok(n, 2, "child of a process mid-call") ? 0 : 1);
        }
        int st = 0;
        waitpid(child, &st, 0);
        pthread_join(t, NULL);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 3) continue;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            printf("child of a process mid-call failed (status %d)\n", st);
            return 1;
        }
        return 0;
    }
    printf("the call always ended before fork(): inconclusive\n");
    return 1;
}

static int early(int n) {
    const pid_t child = fork();
    if (child == 0) exit(gemm_ok(n, "child") ? 0 : 1);
    int ok = wait_ok(child, "child");
    ok = gemm_ok(n, "parent") && ok;
    printf("early: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

int main(int argc, char** argv) {
    const int n = 256;
    fill(n);
    if (argc > 1 && strcmp(argv[1], "tree") == 0) return tree(n);
    if (argc > 1 && strcmp(argv[1], "mid-call") == 0) return mid_call(n);
    if (argc > 1 && strcmp(argv[1], "early") == 0) return early(n);
    fprintf(stderr, "usage: fork_program tree|mid-call|early\n");
    return 2;
}

/* The caller's floating-point environment (docs/semantics.md, "The floating-point environment"):
 * an ordinary C program, linked only with -lblas, that calls sgemm_, dgemm_, cgemm_, zgemm_,
 * cblas_dgemm and cblas_zgemm under each environment a real program sets, and checks for every
 * call that
 *   - the MXCSR's control bits (rounding, exception masks, FTZ, DAZ) are as the caller left them;
 *   - no flag is raised but inexact, and the flags the caller had raised are still raised;
 *   - the result: under a directed rounding mode, the bits the program's real BLAS computes under
 *     the same mode (the library forwards such calls: fenv:rounding); under any other
 *     environment, the bits the same call gives under the default environment (a routed call
 *     computes under the library's own environment, whatever the caller's).
 * The environments: round upward, downward and toward zero; the traps of -ffpe-trap=invalid,
 * zero,overflow (a trap kills the program: the test then fails on its exit status); FTZ and DAZ;
 * flags raised before the call. Then C that overflows: the call gives the real BLAS's Inf and
 * raises at most the real BLAS's flags, and with the overflow trap on, dies of SIGFPE as the
 * real BLAS does. Prints "N passed, N failed" and one line per environment of the calls made.
 *   fenv_program [N]    N: the order of the square case (default 64) */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <fenv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xmmintrin.h>

#include "../common/blas.h"
#include "../common/rng.h"

enum { kFlags = 0x3F, kInvalid = 0x01, kDivide = 0x04, kOverflow = 0x08, kUnderflow = 0x10, kInexact = 0x20,
       kDaz = 0x40, kFtz = 0x8000 };

static int passed, failed;
static void check(int ok, const char* what, const char* env, const char* routine, int m, int n, int k) {
    if (ok) ++passed;
    else { ++failed; printf("FAIL: %s: env=%s routine=%s m=%d n=%d k=%d\n", what, env, routine, m, n, k); }
}

/* ---- the environments ---- */
typedef struct {
    const char* name;
    int rounding;          /* fesetround() argument */
    int traps;             /* feenableexcept() argument */
    unsigned csr_or;       /* MXCSR bits set on top (FTZ, DAZ) */
    unsigned preset_flags; /* MXCSR flags set before the call (feraiseexcept() would set overflow
                            * and underflow in the x87 status word only, on x86-64 glibc) */
    int directed;          /* the library forwards: compare with the real BLAS under it */
} Env;

static const Env kEnvs[] = {
    {"upward", FE_UPWARD, 0, 0, 0, 1},
    {"downward", FE_DOWNWARD, 0, 0, 0, 1},
    {"towardzero", FE_TOWARDZERO, 0, 0, 0, 1},
    {"traps", FE_TONEAREST, FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW, 0, 0, 0},
    {"ftz-daz", FE_TONEAREST, 0, kFtz | kDaz, 0, 0},
    {"flags-raised", FE_TONEAREST, 0, 0, kInvalid | kDivide | kOverflow | kUnderflow, 0},
};

static void set_env(const Env* e) {
    fesetround(e->rounding);
    if (e->traps) feenableexcept(e->traps);
    _mm_setcsr(_mm_getcsr() | e->csr_or);
    feclearexcept(FE_ALL_EXCEPT);
    _mm_setcsr(_mm_getcsr() | e->preset_flags); /* masked when set: no trap */
}

static void default_env(void) {
    fedisableexcept(FE_ALL_EXCEPT);
    fesetround(FE_TONEAREST);
    _mm_setcsr(_mm_getcsr() & ~(unsigned)(kFtz | kDaz));
    feclearexcept(FE_ALL_EXCEPT);
}

/* ---- the routines: the program's (the library's, under LD_PRELOAD) and the real BLAS's ---- */
typedef struct {
    const char* name;
    int bytes;  /* of one element */
    int cblas;  /* 0: Fortran, 1: CBLAS column-major */
    void* lib;
    void* real;
} Routine;

static Routine routines[] = {
    {"sgemm_", 4, 0, (void*)sgemm_, NULL},
    {"dgemm_", 8, 0, (void*)dgemm_, NULL},
    {"cgemm_", 8, 0, (void*)cgemm_, NULL},
    {"zgemm_", 16, 0, (void*)zgemm_, NULL},
    {"cblas_dgemm", 8, 1, (void*)cblas_dgemm, NULL},
    {"cblas_zgemm", 16, 1, (void*)cblas_zgemm, NULL},
};
enum { kRoutines = sizeof routines / sizeof routines[0] };

/* The real BLAS: the library this program linked (-lblas), looked up by handle, which finds its
 * own definitions before the preloaded library's. */
static void find_real_blas(void) {
    Dl_info info;
    void* h = NULL;
    void* any = dlsym(RTLD_DEFAULT, "ddot_");  /* a BLAS symbol the library does not define */
    if (any && dladdr(any, &info) && info.dli_fname) h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!h) { printf("FAIL: the real BLAS cannot be found\n"); exit(2); }
    for (int r = 0; r < kRoutines; ++r)
        if (!(routines[r].real = dlsym(h, routines[r].name))) {
            printf("FAIL: the real BLAS has no %s\n", routines[r].name);
            exit(2);
        }
}

/* Column-major, no transposes, padded leading dimensions. alpha and beta are 1.5 and -0.5 (their
 * imaginary parts 0.25 and 0.5 for the complex routines); `big` multiplies A's entries. */
typedef struct {
    int m, n, k, lda, ldb, ldc;
    void *a, *b, *c0;
} Case;

static int is_single(const Routine* r) { return r->bytes == 4 || (r->bytes == 8 && r->name[0] == 'c' && r->name[1] == 'g'); }

static Case make_case(const Routine* r, int m, int n, int k, amxt_rng* rng, double scale_a, double scale_b) {
    Case c = {m, n, k, m + 1, k + 2, m + 3, NULL, NULL, NULL};
    const int parts = r->bytes == 16 || (r->bytes == 8 && is_single(r)) ? 2 : 1;
    const int real_bytes = r->bytes / parts;
    const long na = (long)c.lda * k * parts, nb = (long)c.ldb * n * parts, nc = (long)c.ldc * n * parts;
    c.a = malloc(na * real_bytes);
    c.b = malloc(nb * real_bytes);
    c.c0 = malloc(nc * real_bytes);
    for (int w = 0; w < 3; ++w) {
        void* x = w == 0 ? c.a : w == 1 ? c.b : c.c0;
        const long count = w == 0 ? na : w == 1 ? nb : nc;
        const double scale = w == 0 ? scale_a : w == 1 ? scale_b : 1.0;
        for (long i = 0; i < count; ++i) {
            /* scale_a < 0: every real part -scale, every imaginary part 0 */
            const double v = scale_a >= 0 ? amxt_rng_uniform(rng) * scale : parts == 2 && i % 2 ? 0 : scale;
            if (real_bytes == 4) ((float*)x)[i] = (float)v;
            else ((double*)x)[i] = v;
        }
    }
    return c;
}

static void free_case(Case* c) { free(c->a); free(c->b); free(c->c0); }

/* Runs routine r (fn: its library or real entry point) on a copy of C0; returns that copy. */
static void* run(const Routine* r, void* fn, const Case* c) {
    const size_t cbytes = (size_t)c->ldc * c->n * r->bytes;
    void* out = malloc(cbytes);
    memcpy(out, c->c0, cbytes);
    const float s_alpha[2] = {1.5f, 0.25f}, s_beta[2] = {-0.5f, 0.5f};
    const double d_alpha[2] = {1.5, 0.25}, d_beta[2] = {-0.5, 0.5};
    const void* alpha = is_single(r) ? (const void*)s_alpha : (const void*)d_alpha;
    const void* beta = is_single(r) ? (const void*)s_beta : (const void*)d_beta;
    if (r->cblas && r->bytes == 8)
        ((cblas_dgemm_fn*)fn)(CblasColMajor, CblasNoTrans, CblasNoTrans, c->m, c->n, c->k, d_alpha[0], c->a, c->lda,
                              c->b, c->ldb, d_beta[0], out, c->ldc);
    else if (r->cblas)
        ((void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*,
                   int))fn)(CblasColMajor, CblasNoTrans, CblasNoTrans, c->m, c->n, c->k, alpha, c->a, c->lda, c->b,
                            c->ldb, beta, out, c->ldc);
    else
        ((void (*)(const char*, const char*, const int*, const int*, const int*, const void*, const void*, const int*,
                   const void*, const int*, const void*, void*, const int*, size_t, size_t))fn)(
            "N", "N", &c->m, &c->n, &c->k, alpha, c->a, &c->lda, c->b, &c->ldb, beta, out, &c->ldc, 1, 1);
    return out;
}

static int same_bits(const Routine* r, const Case* c, const void* x, const void* y) {
    return memcmp(x, y, (size_t)c->ldc * c->n * r->bytes) == 0;
}

static int holds(const Routine* r, const Case* c, const void* x, int (*pred)(double)) {
    const int parts = r->bytes == 16 || (r->bytes == 8 && is_single(r)) ? 2 : 1;
    const long count = (long)c->ldc * c->n * parts;
    for (long i = 0; i < count; ++i)
        if (pred(r->bytes / parts == 4 ? ((const float*)x)[i] : ((const double*)x)[i])) return 1;
    return 0;
}
static int is_inf(double v) { return v - v != 0 && v == v; }

/* One call of routine r on case c under environment e, checked as the header says. */
static void check_call(const Routine* r, const Case* c, const Env* e) {
    default_env();
    void* want = e->directed ? NULL : run(r, r->lib, c);
    if (e->directed) {
        set_env(e);
        want = run(r, r->real, c);
    }
    set_env(e);
    const unsigned before = _mm_getcsr();
    void* got = run(r, r->lib, c);
    const unsigned after = _mm_getcsr();
    default_env();
    char what[160];
    snprintf(what, sizeof what, "MXCSR control bits %#x after the call, %#x before", after & ~kFlags, before & ~kFlags);
    check((after & ~kFlags) == (before & ~kFlags), what, e->name, r->name, c->m, c->n, c->k);
    snprintf(what, sizeof what, "flags %#x raised by the call (before: %#x; only inexact may be added)",
             after & kFlags & ~(before & kFlags), before & kFlags);
    check((after & kFlags & ~kInexact & ~(before & kFlags)) == 0 && (after & before & kFlags) == (before & kFlags), what,
          e->name, r->name, c->m, c->n, c->k);
    check(same_bits(r, c, got, want), e->directed ? "result differs from the real BLAS's under the same rounding"
                                                  : "result differs from the call's under the default environment",
          e->name, r->name, c->m, c->n, c->k);
    free(want);
    free(got);
}

/* C overflows (entries of A and B near 2^600, alpha 1.5): the library gives the real BLAS's Inf,
 * and raises no flag the real BLAS does not; in a child with the overflow trap on, both die of
 * SIGFPE. FP64 routines only: FP32 calls that could overflow are forwarded (domain:overflow-risk). */
static int dies_of_sigfpe(const Routine* r, void* fn, const Case* c) {
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        feenableexcept(FE_OVERFLOW);
        free(run(r, fn, c));
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGFPE;
}

static void check_overflow(const Routine* r, amxt_rng* rng) {
    Case c = make_case(r, 40, 36, 300, rng, -0x1p600, -0x1p600);  /* every entry -2^600: C = +Inf */
    default_env();
    void* want = run(r, r->real, &c);
    const unsigned real_flags = _mm_getcsr() & kFlags;
    default_env();
    void* got = run(r, r->lib, &c);
    const unsigned lib_flags = _mm_getcsr() & kFlags;
    default_env();
    check(holds(r, &c, want, is_inf) && same_bits(r, &c, got, want), "C overflows to the real BLAS's Inf", "overflow",
          r->name, c.m, c.n, c.k);
    check((lib_flags & ~real_flags & ~kInexact) == 0 && (lib_flags & kOverflow), "flags of an overflowing C", "overflow",
          r->name, c.m, c.n, c.k);
    check(dies_of_sigfpe(r, r->real, &c) == dies_of_sigfpe(r, r->lib, &c), "SIGFPE under the overflow trap as the real BLAS",
          "overflow", r->name, c.m, c.n, c.k);
    free(want);
    free(got);
    free_case(&c);
}

int main(int argc, char** argv) {
    const int order = argc > 1 ? atoi(argv[1]) : 64;
    const int shapes[][3] = {{order, order, order}, {5, 7, 2}, {33, 17, 45}};
    find_real_blas();
    amxt_rng rng = amxt_rng_seeded(49);
    for (size_t e = 0; e < sizeof kEnvs / sizeof kEnvs[0]; ++e) {
        int calls = 0;
        for (int r = 0; r < kRoutines; ++r)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
                Case c = make_case(&routines[r], shapes[s][0], shapes[s][1], shapes[s][2], &rng, 1, 1);
                check_call(&routines[r], &c, &kEnvs[e]);
                free_case(&c);
                ++calls;
            }
        printf("env=%s calls=%d\n", kEnvs[e].name, calls);
    }
    for (int r = 0; r < kRoutines; ++r)
        if (!is_single(&routines[r])) check_overflow(&routines[r], &rng);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

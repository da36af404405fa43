// Differential fuzz test of libamxblas.so: random GEMM calls through every entry point,
// checked against OpenBLAS called directly in the same process.
//
//   gemm_fuzz [--seed=S] [--calls=N] [--max-mnk=V] [--case=I] [--fenv]
//
// Run with LD_PRELOAD=libamxblas.so, AMXBLAS_VERBOSE=2 and AMXBLAS_LOG=FILE (the CTest tests
// set these, and one routing configuration each). The program links OpenBLAS; its sgemm_,
// dgemm_, cblas_sgemm and cblas_dgemm resolve to the library, and OpenBLAS's own come from
// dlopen(RTLD_NOLOAD). After each call, the line the library logged says which route it took:
//   forward     C (all of it, padding included) bitwise equal to OpenBLAS's on the same input,
//               and for invalid arguments the same xerbla text;
//   beta-scale  only for K = 0 or ALPHA = 0, and C := BETA*C exactly as the reference BLAS;
//   fp32, fp64-P, fp64-int8
//               every entry within the bound of tests/fuzz/error_bound.h of the exact result
//               (auto's certificate, or the fixed count's), the padding rows of C untouched,
//               and only for finite inputs.
// A and B are never written. Case I of seed S is generated from (S, I) alone: --case=I
// replays it. At the end it prints the calls per route; any failure prints the seed and case.
// --fenv: each case also runs under a caller's floating-point environment drawn for it, and
// the call must leave it as tests/fuzz/caller_fenv.h says.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/common/blas.h"
#include "tests/fuzz/caller_fenv.h"
#include "tests/fuzz/error_bound.h"

namespace {

// ---------------------------------------------------------------------------------------------
// The BLAS entry points, twice: through the library and OpenBLAS's own.
enum Order { kRowMajor = 101, kColMajor = 102 };
enum Trans { kNoTrans = 111, kTrans = 112, kConjTrans = 113 };

template <typename T>
using FortranGemm = std::conditional_t<sizeof(T) == 4, sgemm_fn*, dgemm_fn*>;
template <typename T>
using CblasGemm = std::conditional_t<sizeof(T) == 4, cblas_sgemm_fn*, cblas_dgemm_fn*>;

template <typename T>
struct Gemm {
    FortranGemm<T> fortran;
    CblasGemm<T> cblas;
};

template <typename T>
struct Entries {
    Gemm<T> library, openblas;
};

Entries<float> g_s;
Entries<double> g_d;

template <typename Fn>
Fn lookup(void* handle, const char* name) {
    void* p = dlsym(handle, name);
    if (!p) {
        std::fprintf(stderr, "gemm_fuzz: %s not found\n", name);
        std::exit(2);
    }
    return reinterpret_cast<Fn>(p);
}

// OpenBLAS's own symbols, from the object that defines openblas_set_num_threads (which the
// library does not export).
void resolve_entries() {
    Dl_info info{};
    void* openblas = nullptr;
    if (dladdr(reinterpret_cast<void*>(&openblas_set_num_threads), &info) && info.dli_fname)
        openblas = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!openblas) {
        std::fprintf(stderr, "gemm_fuzz: cannot find OpenBLAS's own symbols: %s\n", dlerror());
        std::exit(2);
    }
    g_s.library = {lookup<FortranGemm<float>>(RTLD_DEFAULT, "sgemm_"), lookup<CblasGemm<float>>(RTLD_DEFAULT, "cblas_sgemm")};
    g_d.library = {lookup<FortranGemm<double>>(RTLD_DEFAULT, "dgemm_"), lookup<CblasGemm<double>>(RTLD_DEFAULT, "cblas_dgemm")};
    g_s.openblas = {lookup<FortranGemm<float>>(openblas, "sgemm_"), lookup<CblasGemm<float>>(openblas, "cblas_sgemm")};
    g_d.openblas = {lookup<FortranGemm<double>>(openblas, "dgemm_"), lookup<CblasGemm<double>>(openblas, "cblas_dgemm")};
    if (reinterpret_cast<void*>(g_s.library.fortran) == reinterpret_cast<void*>(g_s.openblas.fortran) ||
        reinterpret_cast<void*>(g_d.library.cblas) == reinterpret_cast<void*>(g_d.openblas.cblas)) {
        std::fprintf(stderr, "gemm_fuzz: the GEMM symbols are OpenBLAS's: is libamxblas.so preloaded?\n");
        std::exit(2);
    }
}

// ---------------------------------------------------------------------------------------------
// Random numbers: splitmix64, one stream per case. Not tests/common/rng.h: a seed and case
// number name a fuzz case in reports and replays, so the stream stays the one they were
// found with.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    int below(int n) { return int(next() % uint64_t(n)); }
    bool chance(double p) { return uniform01() < p; }
    double uniform01() { return double(next() >> 11) * 0x1p-53; }
    double uniform() { return 2 * uniform01() - 1; }  // [-1, 1)
};

// ---------------------------------------------------------------------------------------------
// One case.
enum class Api { fortran, cblas_col, cblas_row };
const char* api_name(Api a) { return a == Api::fortran ? "fortran" : a == Api::cblas_col ? "cblas-col" : "cblas-row"; }

// How a matrix's entries are drawn.
enum class Fill { uniform, exponents, specials, integers, zeros };
const char* fill_name(Fill f) {
    switch (f) {
        case Fill::uniform: return "uniform";
        case Fill::exponents: return "exponents";
        case Fill::specials: return "specials";
        case Fill::integers: return "integers";
        case Fill::zeros: return "zeros";
    }
    return "?";
}

// Invalid arguments (forwarded; the real BLAS's xerbla reports them).
enum class Bad { none, trans_a, trans_b, m, n, k, lda, ldb, ldc, order };
const char* bad_name(Bad b) {
    const char* names[] = {"none", "transa", "transb", "m<0", "n<0", "k<0", "lda", "ldb", "ldc", "order"};
    return names[int(b)];
}

struct Case {
    uint64_t seed = 0;
    long index = 0;
    bool dp = false;  // DGEMM
    Api api = Api::fortran;
    char ta = 'N', tb = 'N';
    int m = 0, n = 0, k = 0;
    int lda = 1, ldb = 1, ldc = 1;
    double alpha = 1, beta = 0;
    Fill fa = Fill::uniform, fb = Fill::uniform, fc = Fill::uniform;
    Bad bad = Bad::none;
};

std::string describe(const Case& c) {
    char buf[512];
    std::snprintf(buf, sizeof(buf),
                  "seed=%" PRIu64 " case=%ld %s %s transa=%c transb=%c m=%d n=%d k=%d lda=%d ldb=%d ldc=%d "
                  "alpha=%a beta=%a A=%s B=%s C=%s invalid=%s",
                  c.seed, c.index, c.dp ? "dgemm" : "sgemm", api_name(c.api), c.ta, c.tb, c.m, c.n, c.k, c.lda,
                  c.ldb, c.ldc, c.alpha, c.beta, fill_name(c.fa), fill_name(c.fb), fill_name(c.fc), bad_name(c.bad));
    return buf;
}

bool is_n(char t) { return t == 'N' || t == 'n'; }

// A dimension: mostly small (log-uniform in 1..300), sometimes a block edge, rarely 0.
int draw_dim(Rng& r) {
    static const int edges[] = {1, 2, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256, 257, 300};
    const double u = r.uniform01();
    if (u < 0.03) return 0;
    if (u < 0.18) return edges[r.below(int(sizeof(edges) / sizeof(edges[0])))];
    return int(std::exp(r.uniform01() * std::log(300.0)));
}

int draw_pad(Rng& r) {
    const double u = r.uniform01();
    if (u < 0.55) return 0;
    if (u < 0.9) return 1 + r.below(7);
    return 16 + r.below(48);
}

double draw_scalar(Rng& r, bool dp) {
    const double big = dp ? 1e300 : 1e30;
    switch (r.below(20)) {
        case 0: return 0.0;
        case 1: return -0.0;
        case 2: return NAN;
        case 3: return r.chance(0.5) ? INFINITY : -INFINITY;
        case 4: return 1.0;
        case 5: return -1.0;
        case 6: return r.chance(0.5) ? big : 1 / big;
        case 7: return std::ldexp(r.uniform(), r.below(61) - 30);
        default: return r.chance(0.5) ? r.uniform() : std::ldexp(double(1 + r.below(255)), -r.below(8));
    }
}

Fill draw_fill(Rng& r) {
    const double u = r.uniform01();
    if (u < 0.45) return Fill::uniform;
    if (u < 0.70) return Fill::exponents;
    if (u < 0.85) return Fill::specials;
    if (u < 0.97) return Fill::integers;
    return Fill::zeros;
}

// Entries of one matrix (the whole ld x cols array, padding included: the library must not
// read the padding into the result, and the values there are as wild as the rest).
template <typename T>
void fill_matrix(Rng& r, Fill f, std::vector<T>& v) {
    const bool dp = sizeof(T) == 8;
    const int max_exp = dp ? 300 : 120;
    const T subnormal = dp ? T(0x1p-1060) : T(0x1p-140);
    const T huge = dp ? T(1e300) : T(FLT_MAX / 4);
    // Exponents: one spread per matrix, so some matrices are mildly and some wildly ranged.
    const int spread = 1 + r.below(r.chance(0.5) ? 20 : max_exp);
    for (auto& x : v) {
        switch (f) {
            case Fill::uniform: x = T(r.uniform()); break;
            case Fill::exponents: x = T(std::ldexp(r.uniform(), r.below(2 * spread + 1) - spread)); break;
            case Fill::integers: x = T(r.below(17) - 8); break;
            case Fill::zeros: x = r.chance(0.5) ? T(0) : T(-0.0); break;
            case Fill::specials: {
                const int w = r.below(40);
                x = w == 0 ? T(NAN) : w == 1 ? T(INFINITY) : w == 2 ? T(-INFINITY) : w == 3 ? subnormal
                    : w == 4 ? -huge : w == 5 ? T(0) : T(r.uniform());
                break;
            }
        }
    }
}

Case draw_case(uint64_t seed, long index, int max_mnk) {
    Rng r(seed * 0x9E3779B97F4A7C15ull ^ uint64_t(index) * 0xD1B54A32D192ED03ull);
    Case c;
    c.seed = seed;
    c.index = index;
    c.dp = r.chance(0.5);
    const int api = r.below(4);
    c.api = api < 2 ? Api::fortran : api == 2 ? Api::cblas_col : Api::cblas_row;
    static const char trans[] = "NTCntc";
    c.ta = trans[r.below(6)];
    c.tb = trans[r.below(6)];
    c.m = draw_dim(r);
    c.n = draw_dim(r);
    c.k = draw_dim(r);
    // Keep the work bounded: shrink the largest dimension until m n k fits.
    while (double(c.m) * c.n * c.k > max_mnk) {
        int* big = c.m >= c.n && c.m >= c.k ? &c.m : c.n >= c.k ? &c.n : &c.k;
        *big = std::max(1, *big / 2);
    }
    c.alpha = r.chance(0.7) ? (r.chance(0.5) ? 1.0 : r.uniform()) : draw_scalar(r, c.dp);
    c.beta = r.chance(0.6) ? (r.chance(0.5) ? 0.0 : r.uniform()) : draw_scalar(r, c.dp);
    c.fa = draw_fill(r);
    c.fb = draw_fill(r);
    c.fc = r.chance(0.8) ? Fill::uniform : Fill::specials;
    // Leading dimensions, in the caller's layout: column-major rows, or row-major columns.
    const bool row = c.api == Api::cblas_row;
    const int arows = is_n(c.ta) ? c.m : c.k, acols = is_n(c.ta) ? c.k : c.m;
    const int brows = is_n(c.tb) ? c.k : c.n, bcols = is_n(c.tb) ? c.n : c.k;
    c.lda = std::max(1, row ? acols : arows) + draw_pad(r);
    c.ldb = std::max(1, row ? bcols : brows) + draw_pad(r);
    c.ldc = std::max(1, row ? c.n : c.m) + draw_pad(r);
    if (r.chance(0.04)) {
        c.bad = Bad(1 + r.below(c.api == Api::fortran ? 8 : 9));
        switch (c.bad) {
            case Bad::trans_a: c.ta = "XQ1 "[r.below(4)]; break;
            case Bad::trans_b: c.tb = "XQ1 "[r.below(4)]; break;
            case Bad::m: c.m = -1 - r.below(3); break;
            case Bad::n: c.n = -1 - r.below(3); break;
            case Bad::k: c.k = -1 - r.below(3); break;
            case Bad::lda: c.lda = std::max(1, row ? acols : arows) - 1; break;
            case Bad::ldb: c.ldb = std::max(1, row ? bcols : brows) - 1; break;
            case Bad::ldc: c.ldc = std::max(1, row ? c.n : c.m) - 1; break;
            case Bad::order: break;
            case Bad::none: break;
        }
        // An ld that was already 1 cannot be made too small: then the case is valid after all.
        if ((c.bad == Bad::lda && c.lda < 1) || (c.bad == Bad::ldb && c.ldb < 1) || (c.bad == Bad::ldc && c.ldc < 1))
            c.bad = Bad::none;
        if (c.lda < 1) c.lda = 1;
        if (c.ldb < 1) c.ldb = 1;
        if (c.ldc < 1) c.ldc = 1;
        if (c.bad == Bad::lda && c.lda >= std::max(1, row ? acols : arows)) c.bad = Bad::none;
        if (c.bad == Bad::ldb && c.ldb >= std::max(1, row ? bcols : brows)) c.bad = Bad::none;
        if (c.bad == Bad::ldc && c.ldc >= std::max(1, row ? c.n : c.m)) c.bad = Bad::none;
    }
    return c;
}

// ---------------------------------------------------------------------------------------------
// The log: the line the library wrote for the last call.
struct Log {
    int fd = -1;
    off_t offset = 0;
    std::string pending;

    // Returns the per-call lines written since the last read.
    std::vector<std::string> read_new() {
        std::vector<std::string> lines;
        char buf[4096];
        ssize_t got;
        while ((got = pread(fd, buf, sizeof(buf), offset)) > 0) {
            offset += got;
            pending.append(buf, std::size_t(got));
        }
        std::size_t start = 0, nl;
        while ((nl = pending.find('\n', start)) != std::string::npos) {
            std::string line = pending.substr(start, nl - start);
            if (line.rfind("amxblas: routine=", 0) == 0) lines.push_back(line);
            start = nl + 1;
        }
        pending.erase(0, start);
        return lines;
    }
};

std::string field(const std::string& line, const char* key) {
    const std::string k = std::string(" ") + key + "=";
    const std::size_t p = line.find(k);
    if (p == std::string::npos) return "";
    const std::size_t b = p + k.size();
    return line.substr(b, line.find(' ', b) - b);
}

// ---------------------------------------------------------------------------------------------
// Running and checking one case.
struct Tally {
    std::map<std::string, long> by_route;   // "fp32", "forward reason=...", "beta-scale ..."
    long routed = 0, forwarded = 0, scaled = 0, xerbla = 0;
    long unbounded = 0;  // routed entries where alpha |A||B| overflows (not checked)
    long failures = 0;
};

// Runs fn with stdout and stderr captured; returns what it printed.
template <typename Fn>
std::string captured(Fn fn) {
    std::fflush(stdout);
    std::fflush(stderr);
    // mkstemp's template: the prefix and the six placeholder characters it replaces.
    std::string path = std::string("/tmp/gemm_fuzz_out.") + std::string(6, 'X');
    const int tmp = mkstemp(path.data());
    if (tmp < 0) {
        fn();
        return "(capture failed)";
    }
    unlink(path.c_str());
    const int out = dup(1), err = dup(2);
    dup2(tmp, 1);
    dup2(tmp, 2);
    fn();
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    std::string text;
    char buf[1024];
    ssize_t got;
    off_t at = 0;
    while ((got = pread(tmp, buf, sizeof(buf), at)) > 0) {
        text.append(buf, std::size_t(got));
        at += got;
    }
    close(tmp);
    return text;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename T>
bool same_value(T got, T want) {  // bitwise, except that any NaN matches any NaN
    if (std::isnan(got) && std::isnan(want)) return true;
    return std::memcmp(&got, &want, sizeof(T)) == 0;
}

// ALPHA and BETA in T, rounded to nearest: outside the call's environment (under --fenv the
// call runs in another), as a caller's are.
template <typename T>
void call(const Gemm<T>& g, const Case& c, const std::vector<T>& a, const std::vector<T>& b, std::vector<T>& cm,
          T alpha, T beta) {
    if (c.api == Api::fortran) {
        g.fortran(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &c.lda, b.data(), &c.ldb, &beta, cm.data(), &c.ldc,
                  1, 1);
        return;
    }
    auto cblas_trans = [](char t) {
        return t == 'N' || t == 'n' ? kNoTrans : t == 'T' || t == 't' ? kTrans : t == 'C' || t == 'c' ? kConjTrans : 0;
    };
    const int order = c.bad == Bad::order ? 0 : c.api == Api::cblas_row ? kRowMajor : kColMajor;
    g.cblas(order, cblas_trans(c.ta), cblas_trans(c.tb), c.m, c.n, c.k, alpha, a.data(), c.lda, b.data(), c.ldb, beta,
            cm.data(), c.ldc);
}

// The caller's matrix X (ld, layout) at op(X)(i, l) in column-major terms of the GEMM.
template <typename T>
T op_at(const std::vector<T>& x, int ld, bool trans, bool row, int i, int l) {
    // Column-major: X(r, s) = x[r + s ld]. Row-major: X(r, s) = x[r ld + s].
    const int r = trans ? l : i, s = trans ? i : l;
    return row ? x[std::size_t(r) * ld + s] : x[r + std::size_t(s) * ld];
}

template <typename T>
std::size_t c_index(const Case& c, int i, int j) {
    return c.api == Api::cblas_row ? std::size_t(i) * c.ldc + j : i + std::size_t(j) * c.ldc;
}

bool g_fenv = false;  // --fenv

struct Failure {
    Tally* t;
    const Case* c;
    const gemm_fuzz::CallerFenv* env;
    void operator()(const char* what, const std::string& detail = "") const {
        ++t->failures;
        if (t->failures <= 20)
            std::printf("FAIL: %s\n  %s%s%s%s%s\n  replay: gemm_fuzz --seed=%" PRIu64 " --case=%ld%s (same AMXBLAS_* environment)\n",
                        what, describe(*c).c_str(), g_fenv ? "\n  " : "", g_fenv ? env->describe().c_str() : "",
                        detail.empty() ? "" : "\n  ", detail.c_str(), c->seed, c->index, g_fenv ? " --fenv" : "");
    }
};

// Whether C (the whole array) holds an Inf, a NaN.
template <typename T>
bool holds(const std::vector<T>& x, bool (*pred)(T)) {
    return std::any_of(x.begin(), x.end(), pred);
}
template <typename T>
bool is_inf(T v) { return std::isinf(v); }
template <typename T>
bool is_nan(T v) { return std::isnan(v); }

// Under traps, the library's call runs in a child process: a trap it takes (in OpenBLAS, whose
// kernels may compute on lanes past the matrices) ends in a siglongjmp out of the library's
// frames, which would leave its per-thread state (the re-entry guard) as in the middle of a
// call. The child hands back C, the MXCSR before and after, and the trap, through shared memory;
// the library's log line, if any, it appends to the same log.
template <typename T, typename Fn>
void call_in_child(Fn library_call, std::vector<T>& cm, unsigned* before, unsigned* after) {
    using namespace gemm_fuzz;
    struct Shared {
        Trap trap;
        unsigned before, after;
    };
    const std::size_t bytes = sizeof(Shared) + cm.size() * sizeof(T);
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        std::perror("gemm_fuzz: mmap");
        std::exit(2);
    }
    Shared* sh = new (mem) Shared{};
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        catch_traps();
        if (sigsetjmp(g_trap_return, 1) == 0) {
            library_call();
        } else {
            *after = leave();
            sh->trap = g_trap;
        }
        sh->before = *before;
        sh->after = *after;
        std::memcpy(reinterpret_cast<char*>(sh + 1), cm.data(), cm.size() * sizeof(T));
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::printf("gemm_fuzz: the call's child process ended with status %#x\n", status);
        std::exit(2);
    }
    g_trap = sh->trap;
    *before = sh->before;
    *after = sh->after;
    std::memcpy(cm.data(), reinterpret_cast<const char*>(sh + 1), cm.size() * sizeof(T));
    munmap(mem, bytes);
}

// configured_products: AMXBLAS_FP64_PRODUCTS as a number (0: unset or auto); auto_tol > 0:
// AMXBLAS_FP64_PRODUCTS=auto with that AMXBLAS_FP64_TOL, checked against the certificate.
template <typename T>
void run_case(const Case& c, const Entries<T>& e, Log& log, Tally& t, int configured_products, double auto_tol) {
    using namespace gemm_fuzz;
    // --fenv: the case's environment, and the flags OpenBLAS raises under it (every exception
    // masked): the traps of the drawn set it does not raise are the ones the call runs under.
    const CallerFenv env = g_fenv ? draw_fenv(c.seed, c.index) : CallerFenv{};
    const Failure fail{&t, &c, &env};
    Rng r(c.seed ^ (uint64_t(c.index) << 20) ^ 0x5bd1e995ull);
    const bool row = c.api == Api::cblas_row;
    const int arows = is_n(c.ta) ? c.m : c.k, acols = is_n(c.ta) ? c.k : c.m;
    const int brows = is_n(c.tb) ? c.k : c.n, bcols = is_n(c.tb) ? c.n : c.k;
    // Storage: ld times the other dimension of the caller's layout (at least one element).
    auto extent = [&](int ld, int rows, int cols) {
        const int other = row ? std::max(rows, 0) : std::max(cols, 0);
        return std::max<std::size_t>(1, std::size_t(std::max(ld, 1)) * std::max(other, 1));
    };
    std::vector<T> a(extent(c.lda, arows, acols)), b(extent(c.ldb, brows, bcols)), cm(extent(c.ldc, c.m, c.n));
    fill_matrix(r, c.fa, a);
    fill_matrix(r, c.fb, b);
    fill_matrix(r, c.fc, cm);
    const std::vector<T> a0 = a, b0 = b, c0 = cm;

    const T alpha = T(c.alpha), beta = T(c.beta);
    unsigned real_flags = 0;
    if (g_fenv && c.bad == Bad::none) {
        std::vector<T> pre = c0;
        const unsigned before = enter(env, 0);
        call(e.openblas, c, a, b, pre, alpha, beta);
        real_flags = leave() & kMxcsrFlags & ~before;
    }
    const int traps = c.bad == Bad::none ? env.traps & ~trappable(real_flags) : 0;
    std::vector<T> want = c0;
    std::string text_lib, text_direct;
    unsigned lib_before = 0, lib_after = 0;
    g_trap = Trap{};
    auto library_call = [&] {
        lib_before = enter(env, traps);
        call(e.library, c, a, b, cm, alpha, beta);
        lib_after = leave();
    };
    auto openblas_call = [&] {
        enter(env, 0);
        call(e.openblas, c, a, b, want, alpha, beta);
        leave();
    };
    if (c.bad != Bad::none) {
        text_direct = captured(openblas_call);
        text_lib = captured(library_call);
    } else if (traps) {
        call_in_child(library_call, cm, &lib_before, &lib_after);
    } else {
        library_call();
    }
    if (g_trap.taken) {
        // In the library: only the trap of an overflowing C, or of a NaN it made. In OpenBLAS
        // (the forwarded call): the real BLAS's own, as without the library; the call did not
        // finish, and the library wrote no log line for it.
        t.by_route[std::string("trapped in ") + (std::strstr(g_trap.object, "amxblas") ? "the library" : "OpenBLAS")]++;
        if (std::strstr(g_trap.object, "openblas")) return;
        const bool explained = (g_trap.code == FPE_FLTOVF && holds(cm, is_inf<T>)) ||
                               (g_trap.code == FPE_FLTINV && holds(cm, is_nan<T>));
        if (!explained) fail("the call trapped outside the real BLAS", std::string("in ") + g_trap.object);
        log.read_new();
        return;
    }
    const std::vector<std::string> lines = log.read_new();
    if (lines.size() != 1) {
        fail("the library did not log exactly one line for the call", "lines: " + std::to_string(lines.size()));
        return;
    }
    const std::string route = field(lines[0], "route");
    const std::string reason = field(lines[0], "reason");
    if (!same_bits(a, a0) || !same_bits(b, b0)) fail("A or B was written");

    const bool valid = c.bad == Bad::none;
    const bool empty = c.m == 0 || c.n == 0;
    const bool scales = valid && !empty && (c.k == 0 || T(c.alpha) == T(0));
    if (!valid && !(route == "forward" && reason == "args:invalid")) fail("invalid arguments not forwarded", lines[0]);
    if (scales != (route == "beta-scale")) fail("beta-scale exactly for K = 0 or ALPHA = 0", lines[0]);
    t.by_route[route + (reason.empty() ? "" : " reason=" + reason)]++;
    if (g_fenv) {
        if ((lib_after & ~kMxcsrFlags) != (lib_before & ~kMxcsrFlags))
            fail("the call changed the MXCSR's control bits", lines[0]);
        if ((lib_after & lib_before & kMxcsrFlags) != (lib_before & kMxcsrFlags))
            fail("the call cleared a flag the caller had raised", lines[0]);
        const unsigned added = lib_after & kMxcsrFlags & ~lib_before;
        const unsigned allowed = real_flags | kMxcsrInexact | kMxcsrDenormal | (holds(cm, is_inf<T>) ? kMxcsrOverflow : 0) |
                                 (holds(cm, is_nan<T>) ? kMxcsrInvalid : 0);
        if (added & ~allowed) {
            char d[96];
            std::snprintf(d, sizeof d, "flags added %#x, OpenBLAS's %#x: ", added, real_flags);
            fail("the call raised a flag OpenBLAS does not and its result does not explain", d + lines[0]);
        }
        if (env.directed() && route != "forward" && route != "beta-scale")
            fail("routed under a directed rounding mode", lines[0]);
    }

    if (route == "forward") {
        ++t.forwarded;
        if (!valid) {
            ++t.xerbla;
            if (text_lib != text_direct) fail("xerbla text differs", "library: " + text_lib + "\n  OpenBLAS: " + text_direct);
        } else {
            openblas_call();
        }
        if (!same_bits(cm, want)) fail("forwarded result differs from OpenBLAS's (bitwise)", lines[0]);
        return;
    }
    if (route == "beta-scale") {
        ++t.scaled;
        std::vector<T> expect = c0;
        enter(env, 0);  // C := BETA*C is computed in the caller's environment, as the reference BLAS does
        if (beta != T(1))
            for (int j = 0; j < c.n; ++j)
                for (int i = 0; i < c.m; ++i) {
                    T& x = expect[c_index<T>(c, i, j)];
                    x = beta == T(0) ? T(0) : beta * x;
                }
        leave();
        for (std::size_t q = 0; q < cm.size(); ++q)
            if (!same_value(cm[q], expect[q])) {
                char d[160];
                std::snprintf(d, sizeof(d), "C[%zu] = %a, reference BLAS %a (before: %a)", q, double(cm[q]),
                              double(expect[q]), double(c0[q]));
                fail("beta-scale differs from the reference BLAS", d);
                return;
            }
        return;
    }
    if (route != "fp32" && route.rfind("fp64-", 0) != 0) {
        fail("unknown route", lines[0]);
        return;
    }
    ++t.routed;
    // fp64-int8: the INT8 engine, which under AMXBLAS_FP64_PRODUCTS=auto (the default engine
    // tries it first) promises auto's bound too (docs/fp64-int8.md), and with a fixed count of
    // moduli (AMXBLAS_FP64_ENGINE=int8 AMXBLAS_FP64_PRODUCTS=N, N in the line's products=)
    // the bound of that count.
    const bool int8 = route == "fp64-int8";
    const int moduli = int8 ? std::atoi(field(lines[0], "products").c_str()) : 0;
    if (int8 && (moduli < 6 || moduli > 24)) {
        fail("route fp64-int8 without a count of moduli from 6 to 24", lines[0]);
        return;
    }
    const int products = route == "fp32" ? 0 : int8 ? moduli : std::atoi(route.c_str() + 5);  // fp64-P
    if ((products == 0) != (sizeof(T) == 4)) fail("route of the wrong precision", lines[0]);
    if (products && configured_products > 0 && products != configured_products)
        fail("routed with another product (moduli) count than configured", lines[0]);

    // Exact result (FP32 inputs: products exact in double; FP64: long double sums) and the
    // scale of each entry for the bound.
    using Wide = long double;
    // The row maxima of op(A) and column maxima of op(B): what the split scales by.
    std::vector<double> maxa(std::size_t(std::max(c.m, 0)), 0.0), maxb(std::size_t(std::max(c.n, 0)), 0.0);
    bool finite = std::isfinite(c.alpha) && std::isfinite(c.beta);
    for (int i = 0; i < c.m; ++i)
        for (int l = 0; l < c.k; ++l) {
            const double v = double(op_at(a, c.lda, !is_n(c.ta), row, i, l));
            finite = finite && std::isfinite(v);
            maxa[i] = std::fmax(maxa[i], std::fabs(v));
        }
    for (int l = 0; l < c.k; ++l)
        for (int j = 0; j < c.n; ++j) {
            const double v = double(op_at(b, c.ldb, !is_n(c.tb), row, l, j));
            finite = finite && std::isfinite(v);
            maxb[j] = std::fmax(maxb[j], std::fabs(v));
        }
    if (!finite) {
        fail("routed although ALPHA, BETA, A or B has a NaN or Inf", lines[0]);
        return;
    }
    const T limit = std::numeric_limits<T>::max();
    std::vector<Wide> arow(std::size_t(std::max(c.k, 1)));
    for (int i = 0; i < c.m; ++i) {
        for (int l = 0; l < c.k; ++l) arow[l] = Wide(op_at(a, c.lda, !is_n(c.ta), row, i, l));
        for (int j = 0; j < c.n; ++j) {
            Wide sum = 0, mag = 0;
            for (int l = 0; l < c.k; ++l) {
                const Wide bl = Wide(op_at(b, c.ldb, !is_n(c.tb), row, l, j));
                sum += arow[l] * bl;
                mag += std::fabs(arow[l] * bl);
            }
            const std::size_t q = c_index<T>(c, i, j);
            const T before = c0[q];
            const Wide exact = Wide(c.alpha) * sum + (T(c.beta) == T(0) ? Wide(0) : Wide(c.beta) * Wide(before));
            amxblas_test::EntryScale s;
            s.k = c.k;
            s.alpha = std::fabs(c.alpha);
            s.beta = std::fabs(c.beta);
            s.ab = double(mag);
            s.maxa = maxa[i];
            s.maxb = maxb[j];
            s.c0 = std::fabs(double(before));
            const double bound = products == 0  ? amxblas_test::fp32_routed_bound(s)
                                 : auto_tol > 0 ? amxblas_test::fp64_auto_bound(s, auto_tol)
                                 : int8         ? amxblas_test::fp64_int8_routed_bound(s, moduli)
                                                : amxblas_test::fp64_routed_bound(s, products);
            const T got = cm[q];
            if (!(s.alpha * s.ab * (1 + 0x1p-20) <= double(limit))) {
                // alpha * (|A||B|)_ij beyond the format's range: alpha times the sum may
                // overflow, and meet an infinite beta * C (Inf - Inf = NaN), as in any BLAS.
                // No bound holds; counted, not checked.
                ++t.unbounded;
                continue;
            }
            bool ok;
            if (std::isnan(exact)) ok = std::isnan(got);  // beta * NaN from C
            else if (std::isinf(exact)) ok = got == exact;  // beta * Inf from C
            else if (std::isinf(got)) ok = std::fabs(exact) + bound >= Wide(limit) && (got > 0) == (exact > 0);
            else ok = std::fabs(Wide(got) - exact) <= Wide(bound);
            if (!ok) {
                char d[256];
                std::snprintf(d, sizeof(d), "C(%d,%d) = %.17g, exact %.17Lg, error %.3g > bound %.3g (%s)", i, j,
                              double(got), exact, double(std::fabs(Wide(got) - exact)), bound, lines[0].c_str());
                fail("routed result outside the documented bound", d);
                return;
            }
        }
    }
    // The padding of C (entries outside the m x n part) is never written.
    for (std::size_t q = 0; q < cm.size(); ++q) {
        const bool inside = row ? (q / c.ldc < std::size_t(c.m) && q % c.ldc < std::size_t(c.n))
                                : (q % c.ldc < std::size_t(c.m) && q / c.ldc < std::size_t(c.n));
        if (!inside && std::memcmp(&cm[q], &c0[q], sizeof(T)) != 0) {
            fail("padding of C written", "element " + std::to_string(q));
            return;
        }
    }
}

long parse_long(const char* arg, const char* name, long fallback) {
    const std::size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) == 0 && arg[n] == '=') return std::strtol(arg + n + 1, nullptr, 0);
    return fallback;
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t seed = 1;
    long calls = 1000, only_case = -1, max_mnk = 2000000;
    for (int i = 1; i < argc; ++i) {
        seed = uint64_t(parse_long(argv[i], "--seed", long(seed)));
        calls = parse_long(argv[i], "--calls", calls);
        only_case = parse_long(argv[i], "--case", only_case);
        max_mnk = parse_long(argv[i], "--max-mnk", max_mnk);
        if (std::strcmp(argv[i], "--fenv") == 0) g_fenv = true;
    }
    const char* log_path = std::getenv("AMXBLAS_LOG");
    const char* verbose = std::getenv("AMXBLAS_VERBOSE");
    if (!log_path || !verbose || std::strcmp(verbose, "2") != 0) {
        std::fprintf(stderr, "gemm_fuzz: needs AMXBLAS_VERBOSE=2 and AMXBLAS_LOG=FILE\n");
        return 2;
    }
    resolve_entries();
    Log log;
    log.fd = open(log_path, O_RDONLY | O_CREAT, 0644);
    if (log.fd < 0) {
        std::perror(log_path);
        return 2;
    }
    log.offset = lseek(log.fd, 0, SEEK_END);
    const char* fp64 = std::getenv("AMXBLAS_FP64_PRODUCTS");
    const int configured_products = fp64 ? std::atoi(fp64) : 0;
    const char* tol = std::getenv("AMXBLAS_FP64_TOL");
    const double auto_tol = fp64 && std::strcmp(fp64, "auto") == 0 ? (tol ? std::atof(tol) : 1.0) : 0.0;

    Tally t;
    const long first = only_case >= 0 ? only_case : 0, last = only_case >= 0 ? only_case + 1 : calls;
    for (long i = first; i < last; ++i) {
        const Case c = draw_case(seed, i, int(max_mnk));
        if (only_case >= 0) std::printf("case: %s\n", describe(c).c_str());
        if (c.dp) run_case(c, g_d, log, t, configured_products, auto_tol);
        else run_case(c, g_s, log, t, configured_products, auto_tol);
    }
    std::printf("gemm_fuzz: seed=%" PRIu64 "%s calls=%ld routed=%ld forwarded=%ld beta-scale=%ld xerbla=%ld "
                "unbounded-entries=%ld failures=%ld\n",
                seed, g_fenv ? " fenv" : "", last - first, t.routed, t.forwarded, t.scaled, t.xerbla, t.unbounded, t.failures);
    for (const auto& [route, n] : t.by_route) std::printf("  %-48s %ld\n", route.c_str(), n);
    const char* env[] = {"AMXBLAS_BACKEND", "AMXBLAS_FP32", "AMXBLAS_FP64_PRODUCTS", "AMXBLAS_FP64_TOL", "AMXBLAS_MIN_N",
                         "AMXBLAS_SHAPES"};
    std::printf("  environment:");
    for (const char* name : env) std::printf(" %s=%s", name, std::getenv(name) ? std::getenv(name) : "(unset)");
    std::printf("\n");
    return t.failures ? 1 : 0;
}

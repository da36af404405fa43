// The decision's own cost (issue 45): a call the library forwards below AMXBLAS_MIN_N, against
// the real BLAS alone. A 4 x 4 x 4 GEMM in a loop, one thread, the real BLAS's routine called
// directly and through libamxblas.so in one process, batches of calls alternated (which goes
// first alternates too), medians of the per-call times and of the per-call difference.
//   amxblas_bench_tiny_call INTERPOSER [--blas LIB] [--pairs P] [--n N]
// The library reads its settings when it is loaded: this program sets AMXBLAS_FP64_PRODUCTS=auto
// (so that a DGEMM reaches the size rule, not fp64:disabled) and leaves AMXBLAS_MIN_N at its
// default, 256, unless they are set. Target: at most 20 ns added per call.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/common/blas.h"

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

using CblasDgemm = cblas_dgemm_fn;

struct Operands {
    int n;
    std::vector<double> a, b, c;
    std::vector<float> af, bf, cf;
    explicit Operands(int size)
        : n(size), a(size * size, 0.5), b(size * size, 0.25), c(size * size), af(size * size, 0.5f),
          bf(size * size, 0.25f), cf(size * size) {}
};

// One routine's two entry points, and a batch of `calls` back-to-back calls of either.
struct Pair {
    const char* name;
    void* direct;
    void* through;
    double (*batch)(void* f, Operands& o, int calls);
};

double dgemm_batch(void* f, Operands& o, int calls) {
    auto* g = reinterpret_cast<dgemm_fn*>(f);
    const double one = 1, zero = 0;
    const double t0 = now_s();
    for (int q = 0; q < calls; ++q) g("N", "N", &o.n, &o.n, &o.n, &one, o.a.data(), &o.n, o.b.data(), &o.n, &zero, o.c.data(), &o.n, 1, 1);
    return now_s() - t0;
}

double sgemm_batch(void* f, Operands& o, int calls) {
    auto* g = reinterpret_cast<sgemm_fn*>(f);
    const float one = 1, zero = 0;
    const double t0 = now_s();
    for (int q = 0; q < calls; ++q)
        g("N", "N", &o.n, &o.n, &o.n, &one, o.af.data(), &o.n, o.bf.data(), &o.n, &zero, o.cf.data(), &o.n, 1, 1);
    return now_s() - t0;
}

double cblas_dgemm_batch(void* f, Operands& o, int calls) {
    auto* g = reinterpret_cast<CblasDgemm*>(f);
    const double t0 = now_s();
    for (int q = 0; q < calls; ++q) g(102, 111, 111, o.n, o.n, o.n, 1.0, o.a.data(), o.n, o.b.data(), o.n, 0.0, o.c.data(), o.n);
    return now_s() - t0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: amxblas_bench_tiny_call INTERPOSER [--blas LIB] [--pairs P] [--n N]\n");
        return 2;
    }
    const char* interposer = argv[1];
    std::string blas_path = "libopenblas.so.0";
    int pairs = 201, n = 4;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--blas")) blas_path = argv[i + 1];
        else if (!std::strcmp(argv[i], "--pairs")) pairs = std::max(3, std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--n")) n = std::max(1, std::atoi(argv[i + 1]));
        else return std::fprintf(stderr, "amxblas_bench_tiny_call: unknown option %s\n", argv[i]), 2;
    }
    setenv("AMXBLAS_FP64_PRODUCTS", "auto", 0);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    // The real BLAS in the global scope, so that the interposer's RTLD_NEXT lookup finds it as it
    // finds a program's own BLAS.
    void* blas = dlopen(blas_path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    void* ours = dlopen(interposer, RTLD_NOW | RTLD_LOCAL);
    if (!blas || !ours) {
        std::fprintf(stderr, "amxblas_bench_tiny_call: %s\n", dlerror());
        return 1;
    }
    if (auto* set_threads = reinterpret_cast<void (*)(int)>(dlsym(blas, "openblas_set_num_threads"))) set_threads(1);
    Pair routines[] = {{"dgemm_", dlsym(blas, "dgemm_"), dlsym(ours, "dgemm_"), dgemm_batch},
                       {"sgemm_", dlsym(blas, "sgemm_"), dlsym(ours, "sgemm_"), sgemm_batch},
                       {"cblas_dgemm", dlsym(blas, "cblas_dgemm"), dlsym(ours, "cblas_dgemm"), cblas_dgemm_batch}};
    Operands o(n);
    const char* min_n = std::getenv("AMXBLAS_MIN_N");
    std::printf("== A %d x %d x %d GEMM below AMXBLAS_MIN_N (%s), one thread: the real BLAS (%s) alone and through "
                "the library; medians of %d alternated batches ==\n",
                n, n, n, min_n ? min_n : "256", blas_path.c_str(), pairs);
    std::printf("%-12s %10s %10s %9s %7s  %s\n", "routine", "direct_ns", "through_ns", "added_ns", "ratio", "target: added <= 20 ns");
    int missed = 0;
    for (const Pair& p : routines) {
        if (!p.direct || !p.through || p.direct == p.through) {
            std::printf("%-12s not in both libraries: skipped\n", p.name);
            continue;
        }
        p.batch(p.direct, o, 100);  // warm-up: symbol resolution, the library's settings
        p.batch(p.through, o, 100);
        int calls = 64;
        while (p.batch(p.direct, o, calls) < 2e-4 && calls < (1 << 22)) calls *= 2;  // batches of ~0.2 ms
        std::vector<double> direct, through, added;
        for (int q = 0; q < pairs; ++q) {
            double d, t;
            if (q % 2) {
                d = p.batch(p.direct, o, calls);
                t = p.batch(p.through, o, calls);
            } else {
                t = p.batch(p.through, o, calls);
                d = p.batch(p.direct, o, calls);
            }
            direct.push_back(d / calls);
            through.push_back(t / calls);
            added.push_back((t - d) / calls);
        }
        const double d = 1e9 * median(direct), t = 1e9 * median(through), a = 1e9 * median(added);
        missed += a > 20;
        std::printf("%-12s %10.1f %10.1f %9.1f %7.2f  %s\n", p.name, d, t, a, t / d, a <= 20 ? "PASS" : "MISS");
    }
    return missed ? 1 : 0;
}

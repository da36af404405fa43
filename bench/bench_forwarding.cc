// The interposer's overhead on forwarded calls: OpenBLAS's dgemm_ called directly against the
// same call through libamxblas.so's dgemm_, which forwards it (AMXBLAS_FP64_PRODUCTS=0 is the
// default, and set here explicitly), in one process, interleaved, medians of many batches.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "bench/bench.h"
#include "tests/common/blas.h"

namespace amxblas::bench {

namespace {

using DgemmFn = dgemm_fn*;  // tests/common/blas.h

// Seconds for `calls` back-to-back calls of f.
double batch(DgemmFn f, int n, int calls, const std::vector<double>& a, const std::vector<double>& b,
             std::vector<double>* c) {
    const double one = 1.0, zero = 0.0;
    const double t0 = now_s();
    for (int q = 0; q < calls; ++q)
        f("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c->data(), &n, 1, 1);
    return now_s() - t0;
}

}  // namespace

std::vector<ForwardRow> measure_forwarding(const std::string& interposer, const std::vector<int>& sizes,
                                           int pairs, std::string* why) {
    std::vector<ForwardRow> rows;
    // Read by the library when it first needs its settings: set before it is loaded.
    setenv("AMXBLAS_FP64_PRODUCTS", "0", 1);
    void* blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    void* ours = interposer.empty() ? nullptr : dlopen(interposer.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!blas || !ours) {
        const char* err = dlerror();
        *why = std::string(!blas ? "libopenblas.so.0" : interposer.empty() ? "(no --interposer given)" : interposer) +
               ": " + (err ? err : "cannot be opened");
        return rows;
    }
    auto direct = reinterpret_cast<DgemmFn>(dlsym(blas, "dgemm_"));
    auto through = reinterpret_cast<DgemmFn>(dlsym(ours, "dgemm_"));
    if (!direct || !through || direct == through) {
        *why = "dgemm_ not found in both libraries";
        return rows;
    }
    for (int n : sizes) {
        std::vector<double> a(std::size_t(n) * n, 0.5), b(std::size_t(n) * n, 0.25), c(std::size_t(n) * n);
        // Batches of about 0.2 ms, so the clock's own cost is negligible.
        batch(direct, n, 1, a, b, &c);  // warm-up: first-call resolution, page faults
        batch(through, n, 1, a, b, &c);
        int calls = 1;
        while (batch(direct, n, calls, a, b, &c) < 2e-4 && calls < (1 << 20)) calls *= 2;
        std::vector<double> td, ti, diff;
        for (int q = 0; q < pairs; ++q) {
            // Alternate which goes first, so neither always runs on a warmer cache.
            double d, i;
            if (q % 2) {
                d = batch(direct, n, calls, a, b, &c);
                i = batch(through, n, calls, a, b, &c);
            } else {
                i = batch(through, n, calls, a, b, &c);
                d = batch(direct, n, calls, a, b, &c);
            }
            td.push_back(d / calls);
            ti.push_back(i / calls);
            diff.push_back((i - d) / calls);
        }
        ForwardRow r;
        r.n = n;
        r.direct_ns = 1e9 * median(td);
        r.interposed_ns = 1e9 * median(ti);
        r.added_ns = 1e9 * median(diff);
        r.ratio = r.interposed_ns / r.direct_ns;
        rows.push_back(r);
    }
    return rows;
}

}  // namespace amxblas::bench

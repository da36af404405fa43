#include "scripts/replay/blas_call.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

// The Fortran GEMMs, gfortran's ABI: every argument by reference, then the hidden lengths of
// TRANSA and TRANSB. Complex values are (re, im) pairs of the real type.
using SgemmFn = void(const char*, const char*, const int*, const int*, const int*, const float*,
                     const float*, const int*, const float*, const int*, const float*, float*,
                     const int*, std::size_t, std::size_t);
using DgemmFn = void(const char*, const char*, const int*, const int*, const int*, const double*,
                     const double*, const int*, const double*, const int*, const double*, double*,
                     const int*, std::size_t, std::size_t);

extern "C" {
SgemmFn sgemm_, cgemm_;
DgemmFn dgemm_, zgemm_;
}

namespace amxblas::replay {

void* Blas::symbol(const std::string& routine) const {
    if (routine == "sgemm") return sgemm;
    if (routine == "dgemm") return dgemm;
    if (routine == "cgemm") return cgemm;
    return zgemm;
}

Blas resolved_blas() {
    Blas b;
    b.sgemm = reinterpret_cast<void*>(&sgemm_);
    b.dgemm = reinterpret_cast<void*>(&dgemm_);
    b.cgemm = reinterpret_cast<void*>(&cgemm_);
    b.zgemm = reinterpret_cast<void*>(&zgemm_);
    return b;
}

bool opened_blas(const char* path, Blas* out, std::string* error) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* why = dlerror();
        *error = std::string("cannot load ") + path + ": " + (why ? why : "unknown error");
        return false;
    }
    Blas b;
    void** slots[] = {&b.sgemm, &b.dgemm, &b.cgemm, &b.zgemm};
    const char* names[] = {"sgemm_", "dgemm_", "cgemm_", "zgemm_"};
    for (int i = 0; i < 4; ++i) {
        *slots[i] = dlsym(h, names[i]);
        if (!*slots[i]) {
            *error = std::string(path) + " has no " + names[i];
            return false;
        }
    }
    *out = b;
    return true;
}

std::string defining_file(void* fn) {
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_fname) return info.dli_fname;
    return "?";
}

void run_call(const Blas& blas, const GemmFile& g, std::vector<double>* c) {
    const char ta = g.transa, tb = g.transb;
    *c = g.c;
    if (g.single) {
        std::vector<float> a(g.a.begin(), g.a.end()), b(g.b.begin(), g.b.end()), cf(c->begin(), c->end());
        const float alpha[2] = {static_cast<float>(g.alpha[0]), static_cast<float>(g.alpha[1])};
        const float beta[2] = {static_cast<float>(g.beta[0]), static_cast<float>(g.beta[1])};
        reinterpret_cast<SgemmFn*>(blas.symbol(g.routine))(&ta, &tb, &g.m, &g.n, &g.k, alpha, a.data(), &g.lda,
                                                           b.data(), &g.ldb, beta, cf.data(), &g.ldc, 1, 1);
        c->assign(cf.begin(), cf.end());
    } else {
        reinterpret_cast<DgemmFn*>(blas.symbol(g.routine))(&ta, &tb, &g.m, &g.n, &g.k, g.alpha, g.a.data(),
                                                           &g.lda, g.b.data(), &g.ldb, g.beta, c->data(),
                                                           &g.ldc, 1, 1);
    }
}

std::uint64_t checksum(const GemmFile& g, const std::vector<double>& c) {
    std::uint64_t h = 14695981039346656037ull;
    auto mix = [&h](const void* p, std::size_t n) {
        const unsigned char* s = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) h = (h ^ s[i]) * 1099511628211ull;
    };
    const int p = g.parts();
    for (int j = 0; j < g.n; ++j) {
        for (int i = 0; i < g.m * p; ++i) {
            const double v = c[static_cast<std::size_t>(j) * g.ldc * p + i];
            if (g.single) {
                const float f = static_cast<float>(v);
                mix(&f, sizeof f);
            } else {
                mix(&v, sizeof v);
            }
        }
    }
    return h;
}

}  // namespace amxblas::replay

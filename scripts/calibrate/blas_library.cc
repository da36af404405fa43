#include "scripts/calibrate/blas_library.h"
#include "scripts/calibrate/operands.h"

#include <dlfcn.h>

#include <chrono>
#include <complex>
#include <cstddef>

namespace amxblas::calibrate {

namespace {

template <typename T>
using FortranGemm = void(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                         const T*, const int*, const T*, T*, const int*, std::size_t, std::size_t);

template <typename T, typename Real>
void call(void* fn, int m, int n, int k, const Real* a, const Real* b, Real* c) {
    const T one = T(1), zero = T(0);
    reinterpret_cast<FortranGemm<T>*>(fn)("N", "N", &m, &n, &k, &one, reinterpret_cast<const T*>(a), &m,
                                          reinterpret_cast<const T*>(b), &k, &zero, reinterpret_cast<T*>(c), &m, 1, 1);
}

template <typename Real>
void grow(std::vector<Real>* v, std::size_t values) {
    grow_operand(v, values, 0x9E3779B97F4A7C15ULL, Range::symmetric);
}

}  // namespace

bool BlasLibrary::open(const std::string& name, std::string* why) {
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
        const char* err = dlerror();
        *why = err ? err : "cannot be opened";
        return false;
    }
    const char* names[4] = {"sgemm_", "dgemm_", "cgemm_", "zgemm_"};
    for (int r = 0; r < 4; ++r) {
        fn_[r] = dlsym(handle_, names[r]);
        if (!fn_[r]) {
            *why = std::string("has no ") + names[r];
            return false;
        }
    }
    set_threads_ = dlsym(handle_, "openblas_set_num_threads");
    return true;
}

bool BlasLibrary::set_threads(int threads) {
    if (!set_threads_) return false;
    reinterpret_cast<void (*)(int)>(set_threads_)(threads);
    return true;
}

double BlasLibrary::time_call(int routine, int m, int n, int k) {
    const std::size_t per = routine >= 2 ? 2 : 1;  // complex values are pairs
    const std::size_t na = per * std::size_t(m) * k, nb = per * std::size_t(k) * n, nc = per * std::size_t(m) * n;
    const bool single = routine % 2 == 0;
    if (single) grow(&af_, na), grow(&bf_, nb), grow(&cf_, nc);
    else grow(&a_, na), grow(&b_, nb), grow(&c_, nc);
    const auto t0 = std::chrono::steady_clock::now();
    switch (routine) {
        case 0: call<float>(fn_[0], m, n, k, af_.data(), bf_.data(), cf_.data()); break;
        case 1: call<double>(fn_[1], m, n, k, a_.data(), b_.data(), c_.data()); break;
        case 2: call<std::complex<float>>(fn_[2], m, n, k, af_.data(), bf_.data(), cf_.data()); break;
        default: call<std::complex<double>>(fn_[3], m, n, k, a_.data(), b_.data(), c_.data()); break;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double BlasLibrary::time_gemm(int routine, char transa, char transb, int m, int n, int k, const void* alpha,
                              const void* a, int lda, const void* b, int ldb, const void* beta, void* c, int ldc) {
    // Every Fortran GEMM has the same argument list; only the pointee types differ.
    using Any = void(const char*, const char*, const int*, const int*, const int*, const void*, const void*, const int*,
                     const void*, const int*, const void*, void*, const int*, std::size_t, std::size_t);
    const auto t0 = std::chrono::steady_clock::now();
    reinterpret_cast<Any*>(fn_[routine])(&transa, &transb, &m, &n, &k, alpha, a, &lda, b, &ldb, beta, c, &ldc, 1, 1);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace amxblas::calibrate

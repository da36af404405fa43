// Shared by the kernel tests: backend selection, deterministic inputs, the OpenBLAS baseline,
// the paper's metrics (Eqs. 20-21) and a NaN-safe comparison.
//
// Backend selection, so the same checks run on any backend (and under the AMX harness):
//   AMXBLAS_TEST_BACKEND=reference|avx512|amx   (or argv: --backend=NAME); default reference.
//   AMXBLAS_TEST_QUICK=1                        smaller sizes (e.g. under the trap-and-emulate
//                                               harness, where each AMX instruction costs us).
// A backend that this build or machine cannot run makes the test exit 77 (CTest: skipped).
#pragma once

#include <complex>  // before cmocka.h, whose fail() macro breaks <complex>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
// cmocka.h needs the above first, and declares some of its functions (print_error) without
// C linkage of its own.
extern "C" {
#include <cmocka.h>
}

#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/runtime/cpu_features.h"
#include "tests/common/blas.h"
#include "tests/common/metrics.h"
#include "tests/common/rng.h"

namespace kt {

using amxblas::kernels::Backend;

constexpr int kSkipped = 77;

inline Backend g_backend = Backend::reference;
inline bool g_quick = false;

inline bool parse_backend(const std::string& s, Backend* b) { return amxblas::kernels::parse_backend(s.c_str(), b); }

// Reads the backend and size options; returns 0 to go on, or the exit code to return.
inline int setup(int argc, char** argv) {
    std::string name = "reference";
    if (const char* e = std::getenv("AMXBLAS_TEST_BACKEND")) name = e;
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--backend=", 10) == 0) name = argv[i] + 10;
    if (const char* q = std::getenv("AMXBLAS_TEST_QUICK")) g_quick = std::strcmp(q, "0") != 0;
    if (!parse_backend(name, &g_backend)) {
        std::fprintf(stderr, "unknown backend '%s'\n", name.c_str());
        return 2;
    }
    using namespace amxblas::kernels;
    const bool usable = backend_built(g_backend) &&
                        (backend_runnable_on_cpu(g_backend) || (g_backend == Backend::amx && amxblas::kernels::amx_emulator_present()));
    std::printf("# backend=%s built=%d runnable_on_cpu=%d emulator=%d quick=%d\n", backend_name(g_backend),
                backend_built(g_backend), backend_runnable_on_cpu(g_backend), amxblas::kernels::amx_emulator_present(), g_quick);
    if (!usable) {
        std::printf("# backend %s cannot run here: skipped\n", backend_name(g_backend));
        return kSkipped;
    }
    openblas_set_num_threads(1);
    return 0;
}

inline amxblas::kernels::RunOptions options(int fp64_products = 21, int threads = 1) {
    amxblas::kernels::RunOptions o;
    o.backend = g_backend;
    o.fp64_products = fp64_products;
    o.threads = threads;
    o.amx_emulator = amxblas::kernels::amx_emulator_present();
    return o;
}

// Deterministic uniform [-1, 1): tests/common/rng.h.
using amxblas::test::Rng;

template <typename T>
std::vector<T> random_matrix(std::size_t elems, std::uint64_t seed) {
    Rng r(seed);
    std::vector<T> v(elems);
    for (auto& x : v) x = T(r.uniform());
    return v;
}

inline CBLAS_TRANSPOSE cblas_trans(char t) { return (t == 'N' || t == 'n') ? CblasNoTrans : CblasTrans; }

template <typename T>
void blas_gemm(const amxblas::kernels::GemmArgs<T>& g, T* c) {
    if constexpr (sizeof(T) == 4)
        cblas_sgemm(CblasColMajor, cblas_trans(g.transa), cblas_trans(g.transb), g.m, g.n, g.k, g.alpha, g.a, g.lda,
                    g.b, g.ldb, g.beta, c, g.ldc);
    else
        cblas_dgemm(CblasColMajor, cblas_trans(g.transa), cblas_trans(g.transb), g.m, g.n, g.k, g.alpha, g.a, g.lda,
                    g.b, g.ldb, g.beta, c, g.ldc);
}

template <typename T>
T op_at(char trans, const T* x, int ld, int i, int l) {
    return (trans == 'N' || trans == 'n') ? x[i + std::size_t(l) * ld] : x[l + std::size_t(i) * ld];
}

// (|op(A)| |op(B)|)_ij in double, for escaled and elementwise tolerances.
template <typename T>
std::vector<double> abs_product(const amxblas::kernels::GemmArgs<T>& g) {
    std::vector<double> ab(std::size_t(g.m) * g.n, 0.0), arow(g.k);
    for (int i = 0; i < g.m; ++i) {
        for (int l = 0; l < g.k; ++l) arow[l] = std::fabs(double(op_at(g.transa, g.a, g.lda, i, l)));
        for (int j = 0; j < g.n; ++j) {
            double s = 0;
            for (int l = 0; l < g.k; ++l) s += arow[l] * std::fabs(double(op_at(g.transb, g.b, g.ldb, l, j)));
            ab[i + std::size_t(j) * g.m] = s;
        }
    }
    return ab;
}

using amxblas::test::Errors;

// Square, alpha = 1, beta = 0, ldc = m (tests/common/metrics.h).
template <typename T>
Errors metrics(const std::vector<T>& c, const std::vector<T>& cref, const std::vector<double>& ab) {
    return amxblas::test::errors(c, cref, ab);
}

// The whole m x n lower bound of |A||B| of a call prepared under auto
// (amxblas::kernels::lower_bound_blocks gives it block by block), column-major.
inline std::vector<double> whole_lower(amxblas::kernels::PreparedDgemm* p, int m, int n) {
    std::vector<double> lower(std::size_t(m) * n, -1.0);
    amxblas::kernels::lower_bound_blocks(p, [&](int i0, int j0, int rows, int cols, const double* acc) {
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) lower[std::size_t(i0 + i) + std::size_t(j0 + j) * m] = acc[i * amxblas::kernels::kBlockN + j];
    });
    return lower;
}

}  // namespace kt

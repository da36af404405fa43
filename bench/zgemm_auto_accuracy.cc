// ZGEMM with AMXBLAS_FP64_PRODUCTS=auto against an exact reference, beside OpenBLAS's ZGEMM:
// for each input, the products auto picked, its margin and repairs, the largest entrywise
// |C - C_exact| of both (complex moduli) and their ratio, and the largest
// |C - C_exact|_ij / (|A||B|)_ij of both in units of u = 2^-53. C_exact is each part summed in
// double-double (FMA products), about 2^-100 relative to the part's |A'||B'|: the O(N^3)
// reference makes this a tool for N of a few hundred, not a benchmark. Not a test.
//
//   amxblas_zgemm_auto_accuracy [--n N] [--backend avx512|reference] [--threads T] [--tol X]
//
// Inputs (square, alpha = 1, beta = 0, op NN and CT): uniform [-1, 1) parts; log-uniform parts
// (each part times 2^r, r uniform in -20..20); cancellation (op(B)'s second half of each
// column negates its first half, op(A)'s row halves are equal: (AB)_ij is tiny against
// (|A||B|)_ij).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/routed_gemm.h"
#include "tests/common/blas.h"
#include "tests/common/rng.h"

namespace {

using Z = std::complex<double>;
using namespace amxblas::kernels;

Z op_at(char t, const Z* x, int ld, int r, int c) {
    const Z v = t == 'N' ? x[r + std::size_t(c) * ld] : x[c + std::size_t(r) * ld];
    return t == 'C' ? std::conj(v) : v;
}

CBLAS_TRANSPOSE cblas_op(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

// The exact product's entry (to about 2^-100 of w) and w = (|op(A)||op(B)|)_ij, complex moduli.
Z exact_entry(const GemmArgs<Z>& g, int i, int j, double* w) {
    double hi[2] = {}, lo[2] = {};
    const auto add = [&](int part, double x, double y) {
        const double p = x * y, pe = std::fma(x, y, -p), t = hi[part] + p, bb = t - hi[part];
        lo[part] += (hi[part] - (t - bb)) + (p - bb) + pe;
        hi[part] = t;
    };
    *w = 0;
    for (int l = 0; l < g.k; ++l) {
        const Z a = op_at(g.transa, g.a, int(g.lda), i, l), b = op_at(g.transb, g.b, int(g.ldb), l, j);
        add(0, a.real(), b.real());
        add(0, -a.imag(), b.imag());
        add(1, a.real(), b.imag());
        add(1, a.imag(), b.real());
        *w += std::abs(a) * std::abs(b);
    }
    return {hi[0] + lo[0], hi[1] + lo[1]};
}

}  // namespace

int main(int argc, char** argv) {
    int n = 256, threads = 2;
    double tol = 1;
    std::string backend_name = "avx512";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : "";
        if (arg == "--n") n = std::atoi(v), ++i;
        else if (arg == "--threads") threads = std::atoi(v), ++i;
        else if (arg == "--tol") tol = std::atof(v), ++i;
        else if (arg == "--backend") backend_name = v, ++i;
        else {
            std::fprintf(stderr, "zgemm_auto_accuracy: unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    Backend backend;
    if (n < 2 || threads < 1 || !parse_backend(backend_name.c_str(), &backend) || !backend_runnable_on_cpu(backend)) {
        std::fprintf(stderr, "zgemm_auto_accuracy: need --n >= 2, --threads >= 1, a backend that runs here\n");
        return 2;
    }
    openblas_set_num_threads(threads);
    std::printf("ZGEMM auto vs exact, N = %d, backend %s, %d threads, tol %g\n", n, backend_name.c_str(), threads, tol);
    std::printf("%-14s %-3s %8s %7s %9s %11s %12s %7s %9s %10s\n", "input", "op", "products", "margin", "repaired",
                "err_auto", "err_openblas", "ratio", "auto/u", "openblas/u");
    const char* names[] = {"uniform", "log-uniform", "cancellation"};
    for (int kind = 0; kind < 3; ++kind)
        for (const char* ops : {"NN", "CT"}) {
            if (kind == 2 && ops[0] != 'N') continue;  // the construction is for op = N
            amxt_rng r = {std::uint64_t(kind * 7 + 3)};  // tests/common/rng.h
            const std::size_t nn = std::size_t(n) * n;
            std::vector<Z> a(nn), b(nn), c(nn), cb(nn);
            for (auto* v : {&a, &b})
                for (Z& x : *v) {
                    const double re = amxt_rng_uniform(&r);
                    x = {re, amxt_rng_uniform(&r)};
                }
            if (kind == 1)
                for (auto* v : {&a, &b})
                    for (Z& x : *v) {
                        const double re = std::ldexp(x.real(), int(std::lround(amxt_rng_uniform(&r) * 20)));
                        x = {re, std::ldexp(x.imag(), int(std::lround(amxt_rng_uniform(&r) * 20)))};
                    }
            if (kind == 2) {
                const int h = n / 2;
                for (int j = 0; j < n; ++j)
                    for (int l = 0; l < h; ++l) b[l + h + std::size_t(j) * n] = -b[l + std::size_t(j) * n] * (1 + 0x1p-30);
                for (int l = 0; l < h; ++l)
                    for (int i = 0; i < n; ++i) a[i + std::size_t(l + h) * n] = a[i + std::size_t(l) * n];
            }
            const GemmArgs<Z> g{ops[0], ops[1], n, n, n, Z(1), a.data(), n, b.data(), n, Z(0), c.data(), n};
            RunOptions o;
            o.backend = backend;
            o.threads = threads;
            o.fp64_products = kFp64Auto;
            o.fp64_tol = tol;
            Fp64AutoReport rep;
            o.fp64_report = &rep;
            if (const char* why = amxblas::kernels::emulate_gemm(g, o)) {
                std::printf("%-14s %-3s forwarded: %s\n", names[kind], ops, why);
                continue;
            }
            const Z one(1), zero(0);
            cblas_zgemm(CblasColMajor, cblas_op(ops[0]), cblas_op(ops[1]), n, n, n, &one, a.data(), n, b.data(), n,
                        &zero, cb.data(), n);
            double ea = 0, eb = 0, ra = 0, rb = 0;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) {
                    double w;
                    const Z ex = exact_entry(g, i, j, &w);
                    const std::size_t idx = i + std::size_t(j) * n;
                    const double da = std::abs(c[idx] - ex), db = std::abs(cb[idx] - ex);
                    ea = std::max(ea, da);
                    eb = std::max(eb, db);
                    if (w > 0) ra = std::max(ra, da / w), rb = std::max(rb, db / w);
                }
            std::printf("%-14s %-3s %8d %7.3g %9ld %11.3g %12.3g %7.2f %9.3g %10.3g\n", names[kind], ops, rep.products,
                        rep.margin, rep.repaired, ea, eb, eb > 0 ? ea / eb : 0.0, ra / 0x1p-53, rb / 0x1p-53);
        }
    return 0;
}

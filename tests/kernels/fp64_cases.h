// The FP64 certificate tests' problems and exact reference (kernels_certificate_test.cc for the
// BF16 engine's auto, kernels_int8_test.cc for the INT8 engine's): a DGEMM with its own
// operands, and (op(A) op(B))_ij to about 2^-100 relative to (|A||B|)_ij.
#pragma once

#include <cmath>
#include <initializer_list>
#include <cstdint>
#include <vector>

#include "kernels/driver/routed_gemm.h"
#include "tests/kernels/kernels_test_util.h"

namespace kt {

// TwoProduct by FMA, TwoSum, in index order.
inline double exact_entry(const amxblas::kernels::GemmArgs<double>& g, int i, int j) {
    double hi = 0, lo = 0;
    for (int l = 0; l < g.k; ++l) {
        const double a = op_at(g.transa, g.a, g.lda, i, l), b = op_at(g.transb, g.b, g.ldb, l, j);
        const double p = a * b, pe = std::fma(a, b, -p);
        const double s = hi + p, bb = s - hi, se = (hi - (s - bb)) + (p - bb);
        hi = s;
        lo += se + pe;
    }
    return hi + lo;
}

// Uniform [-1, 1) operands from seed and seed + 1, C all NaN, alpha = 1, beta = 0.
struct Case {
    std::vector<double> a, b, c;
    amxblas::kernels::GemmArgs<double> g;
};

inline Case make_case(char ta, char tb, int m, int n, int k, std::uint64_t seed) {
    Case cs;
    const int lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n;
    cs.a = random_matrix<double>(std::size_t(lda) * (ta == 'N' ? k : m), seed);
    cs.b = random_matrix<double>(std::size_t(ldb) * (tb == 'N' ? n : k), seed + 1);
    cs.c.assign(std::size_t(m) * n, NAN);
    cs.g = amxblas::kernels::GemmArgs<double>{ta, tb, m, n, k, 1.0, cs.a.data(), lda, cs.b.data(), ldb, 0.0,
                                              cs.c.data(), m};
    return cs;
}

// Runs the call with o (alpha = 1, beta = 0), which must route, and checks every entry:
// |C - AB| <= tol gamma_K (|A||B|)_ij. Returns the report (o.fp64_report is set to it).
inline amxblas::kernels::Fp64AutoReport run_within_bound(Case& cs, amxblas::kernels::RunOptions o, double tol = 1) {
    amxblas::kernels::Fp64AutoReport rep;
    o.fp64_tol = tol;
    o.fp64_report = &rep;
    const char* why = amxblas::kernels::emulate_gemm(cs.g, o);
    if (why) fail_msg("forwarded: %s", why);
    const amxblas::kernels::GemmArgs<double>& g = cs.g;
    const double ku = g.k * 0x1p-53, gamma = ku / (1 - ku);
    const std::vector<double> ab = abs_product(g);
    for (int j = 0; j < g.n; ++j)
        for (int i = 0; i < g.m; ++i) {
            const double want = exact_entry(g, i, j), got = cs.c[i + std::size_t(j) * g.m];
            const double allowed = tol * gamma * ab[i + std::size_t(j) * g.m] * (1 + 0x1p-20);
            if (!(std::fabs(got - want) <= allowed))
                fail_msg("m=%d n=%d k=%d products=%d: C(%d,%d) = %.17g, exact %.17g, error %.3g > %.3g", g.m, g.n,
                         g.k, rep.products, i, j, got, want, std::fabs(got - want), allowed);
        }
    return rep;
}

// 50 x 41 x 200 with T N, every value scaled by 2^u, u uniform in [-20, 20].
inline Case log_uniform_case() {
    Case cs = make_case('T', 'N', 50, 41, 200, 77);
    Rng r(5);
    for (auto* x : {&cs.a, &cs.b})
        for (double& e : *x) e = std::ldexp(e, int(std::lround(r.uniform() * 20)));
    return cs;
}

// 33 x 40 x 24: rows of A and columns of B 2^600 apart, a zero row and a zero column, and a
// subnormal.
inline Case wide_range_case() {
    Case cs = make_case('N', 'N', 33, 40, 24, 9);
    for (int l = 0; l < 24; ++l)
        for (int i = 0; i < 33; ++i) cs.a[i + std::size_t(l) * 33] *= std::ldexp(1.0, 50 * (i % 13) - 300);
    for (int j = 0; j < 40; ++j)
        for (int l = 0; l < 24; ++l) cs.b[l + std::size_t(j) * 24] *= std::ldexp(1.0, 300 - 45 * (j % 14));
    for (int l = 0; l < 24; ++l) cs.a[5 + std::size_t(l) * 33] = 0;  // a zero row
    for (int l = 0; l < 24; ++l) cs.b[l + 7 * 24] = 0;              // a zero column
    cs.a[3] = 4.9e-324;
    return cs;
}

}  // namespace kt

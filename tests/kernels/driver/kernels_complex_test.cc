// The complex entry points (emulate_cgemm, emulate_zgemm) against OpenBLAS's CGEMM and ZGEMM:
// every transpose pair of N, T and C, edges of the 32-wide tiles and of the 256-wide blocks
// (the real GEMM a complex one becomes is 2K deep and 2N wide), complex alpha and beta,
// beta = 0 over NaN, padding rows of C untouched; ZGEMM bitwise identical across thread
// counts and against the reference backend; the failure contract (reason, C untouched).
#include <array>
#include <cmath>
#include <complex>
#include <cstring>

#include "kernels/driver/routed_gemm.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

template <typename R>
struct Problem {
    GemmArgs<std::complex<R>> g;
    std::vector<std::complex<R>> a, b, c;
};

template <typename R>
std::vector<std::complex<R>> random_complex(std::size_t elems, std::uint64_t seed) {
    kt::Rng r(seed);
    std::vector<std::complex<R>> v(elems);
    for (auto& x : v) {
        const R re = R(r.uniform());
        x = {re, R(r.uniform())};
    }
    return v;
}

template <typename R>
Problem<R> make_problem(char ta, char tb, int m, int n, int k, std::complex<R> alpha, std::complex<R> beta,
                        std::uint64_t seed, int pad = 3) {
    Problem<R> p;
    const int arows = ta == 'N' ? m : k, acols = ta == 'N' ? k : m;
    const int brows = tb == 'N' ? k : n, bcols = tb == 'N' ? n : k;
    const int lda = arows + pad, ldb = brows + pad, ldc = m + pad;
    p.a = random_complex<R>(std::size_t(lda) * acols, seed);
    p.b = random_complex<R>(std::size_t(ldb) * bcols, seed + 1);
    p.c = beta == std::complex<R>(0) ? std::vector<std::complex<R>>(std::size_t(ldc) * n, {R(NAN), R(NAN)})
                                     : random_complex<R>(std::size_t(ldc) * n, seed + 2);
    p.g = {ta, tb, m, n, k, alpha, p.a.data(), lda, p.b.data(), ldb, beta, p.c.data(), ldc};
    return p;
}

CBLAS_TRANSPOSE trans(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

template <typename R>
void blas(const GemmArgs<std::complex<R>>& g, std::complex<R>* c) {
    if constexpr (sizeof(R) == 4)
        cblas_cgemm(CblasColMajor, trans(g.transa), trans(g.transb), g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.b, g.ldb,
                    &g.beta, c, g.ldc);
    else
        cblas_zgemm(CblasColMajor, trans(g.transa), trans(g.transb), g.m, g.n, g.k, &g.alpha, g.a, g.lda, g.b, g.ldb,
                    &g.beta, c, g.ldc);
}

// What the library runs: the kernels with the policy's checks between their phases.
template <typename R>
const char* emulate(const GemmArgs<std::complex<R>>& g, const RunOptions& o) {
    return amxblas::kernels::emulate_gemm(g, o);
}

template <typename R>
std::complex<R> op_at(char t, const std::complex<R>* x, int ld, int i, int l) {
    const std::complex<R> v = t == 'N' ? x[i + std::size_t(l) * ld] : x[l + std::size_t(i) * ld];
    return t == 'C' ? std::conj(v) : v;
}

// |C - C_openblas| <= tol * (|alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|), complex moduli:
// 2^-20 for the FP32 method, 2^-44 for FP64-21 (both methods reach about 2^-23 and 2^-52
// of that bound on uniform data; a sign or conjugation error gives order 1).
template <typename R>
void check_against_blas(Problem<R>& p, int threads, int products = 21) {
    const auto c0 = p.c;
    auto want = p.c;
    blas(p.g, want.data());
    if (const char* why = emulate(p.g, kt::options(products, threads))) fail_msg("forwarded: %s", why);
    const double tol = sizeof(R) == 4 ? 0x1p-20 : 0x1p-44;
    for (int j = 0; j < p.g.n; ++j)
        for (int i = 0; i < p.g.ldc; ++i) {
            const std::size_t idx = i + std::size_t(j) * p.g.ldc;
            if (i >= p.g.m) {
                assert_memory_equal(&p.c[idx], &c0[idx], sizeof c0[idx]);
                continue;
            }
            double ab = 0;
            for (int l = 0; l < p.g.k; ++l)
                ab += std::abs(std::complex<double>(op_at(p.g.transa, p.g.a, p.g.lda, i, l))) *
                      std::abs(std::complex<double>(op_at(p.g.transb, p.g.b, p.g.ldb, l, j)));
            const double beta_c = p.g.beta == std::complex<R>(0) ? 0 : std::abs(p.g.beta) * std::abs(c0[idx]);
            const double bound = tol * (std::abs(p.g.alpha) * ab + beta_c);
            const double d = std::abs(std::complex<double>(p.c[idx]) - std::complex<double>(want[idx]));
            if (!(d <= bound))
                fail_msg("%c%c m=%d n=%d k=%d: C(%d,%d) off by %.3g, bound %.3g", p.g.transa, p.g.transb, p.g.m,
                         p.g.n, p.g.k, i, j, d, bound);
        }
}

template <typename R>
void shapes() {
    const int sizes[][3] = {{1, 1, 1}, {33, 17, 45}, {64, 32, 16}};
    const char t[] = {'N', 'T', 'C'};  // not "NTC": its NUL would be a fourth, invalid, transpose
    std::uint64_t seed = 1;
    for (const auto& s : sizes)
        for (char ta : t)
            for (char tb : t) {
                auto p = make_problem<R>(ta, tb, s[0], s[1], s[2], {R(0.75), R(-0.5)}, {R(-0.25), R(1)}, seed++);
                check_against_blas(p, 1);
            }
    // beta = 0 over NaN, and real alpha.
    auto p = make_problem<R>('C', 'T', 20, 9, 31, {R(2), R(0)}, {R(0), R(0)}, seed++);
    check_against_blas(p, 1);
}

// Past one 256-wide block in M and in 2N, and past one 256-deep panel in 2K, with 2 threads.
template <typename R>
void big() {
    const int m = kt::g_quick ? 40 : 270, n = kt::g_quick ? 20 : 140, k = kt::g_quick ? 30 : 150;
    for (const char* tt : {"NN", "CT", "TC"}) {
        auto p = make_problem<R>(tt[0], tt[1], m, n, k, {R(1), R(0.5)}, {R(0.5), R(0)}, 77);
        check_against_blas(p, 2);
    }
}

// Rows of op(A) 2^-40 .. 2^40 and columns of op(B) 2^-44 .. 2^40 apart, in every transpose
// pair. ZGEMM's split scales each row of op(A') and complex column of op(B') by its own power
// of two (columns 2j and 2j + 1 of op(B') share one), so a mixed-up exponent puts some entry
// off by a power of two, far past the per-entry bound; uniform data, where every exponent is
// the same, cannot tell (a planar instead of interleaved column index in kernels/pack/pack_blocks.h's
// complex_outer_exponents passed every other test here). CGEMM's split is per element; it
// gets the same data.
template <typename R>
void magnitudes(int products) {
    std::uint64_t seed = 300;
    for (char ta : {'N', 'T', 'C'})
        for (char tb : {'N', 'T', 'C'}) {
            const int m = 11, n = 13, k = 9;
            auto p = make_problem<R>(ta, tb, m, n, k, {R(0.5), R(-1)}, {R(1), R(0.25)}, seed++);
            for (int i = 0; i < m; ++i)
                for (int l = 0; l < k; ++l) {
                    auto& x = ta == 'N' ? p.a[i + std::size_t(l) * p.g.lda] : p.a[l + std::size_t(i) * p.g.lda];
                    x *= std::ldexp(R(1), 8 * i - 40);  // rows 2^-40 .. 2^40
                }
            for (int j = 0; j < n; ++j)
                for (int l = 0; l < k; ++l) {
                    auto& x = tb == 'N' ? p.b[l + std::size_t(j) * p.g.ldb] : p.b[j + std::size_t(l) * p.g.ldb];
                    x *= std::ldexp(R(1), 40 - 7 * ((j * 5) % n));  // columns 2^40 .. 2^-44, shuffled
                }
            check_against_blas(p, 2, products);
        }
}

void test_cgemm_shapes(void**) { shapes<float>(); }
void test_cgemm_magnitudes(void**) { magnitudes<float>(21); }
void test_zgemm_magnitudes(void**) {
    magnitudes<double>(21);
    magnitudes<double>(kFp64Auto);
}
void test_zgemm_shapes(void**) { shapes<double>(); }
void test_cgemm_big(void**) { big<float>(); }
void test_zgemm_big(void**) { big<double>(); }

// Every per-panel FP32 sum of the FP64 method is exact, so ZGEMM's bits cannot depend on the
// backend or the thread count.
void test_zgemm_bitwise_reproducible(void**) {
    for (int products : {6, 21}) {
        std::vector<std::complex<double>> first;
        for (int run = 0; run < 3; ++run) {
            auto p = make_problem<double>('C', 'N', 70, 45, kt::g_quick ? 140 : 300, {0.5, 2}, {1, -1}, 5);
            RunOptions o = kt::options(products, run == 1 ? 2 : 1);
            if (run == 2) o.backend = Backend::reference;
            if (run == 2 && kt::g_backend == Backend::reference) o.threads = 2;
            if (const char* why = emulate(p.g, o)) fail_msg("forwarded: %s", why);
            if (run == 0) first = p.c;
            else if (std::memcmp(first.data(), p.c.data(), first.size() * sizeof first[0]) != 0)
                fail_msg("products=%d run %d differs (%s, %d threads)", products, run, backend_name(o.backend), o.threads);
        }
    }
}

// ZGEMM with AMXBLAS_FP64_PRODUCTS=auto. The certificate's promise (docs/fp64-certificate.md,
// Section 9), part by part: |P - (op(A) op(B))_ij| <= gamma_{K+1} w, with w the part's
// (|op(A')||op(B')|) = sum |ar br| + |ai bi| (real part) or |ar bi| + |ai br| (imaginary).
// exact_parts gives the exact parts to about 2^-100 of w (FMA products, double-double sums).
struct Parts {
    double re, im, wre, wim;
};
Parts exact_parts(const GemmArgs<std::complex<double>>& g, int i, int j) {
    double hi[2] = {}, lo[2] = {}, w[2] = {};
    const auto add = [&](int part, double x, double y) {
        const double p = x * y, pe = std::fma(x, y, -p);
        const double t = hi[part] + p, bb = t - hi[part], te = (hi[part] - (t - bb)) + (p - bb);
        hi[part] = t;
        lo[part] += te + pe;
        w[part] += std::fabs(p);
    };
    for (int l = 0; l < g.k; ++l) {
        const auto a = op_at(g.transa, g.a, int(g.lda), i, l), b = op_at(g.transb, g.b, int(g.ldb), l, j);
        add(0, a.real(), b.real());
        add(0, -a.imag(), b.imag());
        add(1, a.real(), b.imag());
        add(1, a.imag(), b.real());
    }
    return {hi[0] + lo[0], hi[1] + lo[1], w[0], w[1]};
}

// alpha = 1, beta = 0 (C is the computed product, exactly): every part within its bound.
Fp64AutoReport check_auto_certified(Problem<double>& p, int threads) {
    RunOptions o = kt::options(kFp64Auto, threads);
    Fp64AutoReport rep;
    o.fp64_report = &rep;
    if (const char* why = emulate(p.g, o)) fail_msg("auto forwarded: %s", why);
    const auto& g = p.g;
    const double nu = (g.k + 1) * 0x1p-53, gamma = nu / (1 - nu);
    for (int j = 0; j < g.n; ++j)
        for (int i = 0; i < g.m; ++i) {
            const Parts e = exact_parts(g, i, j);
            const std::complex<double> got = p.c[i + std::size_t(j) * g.ldc];
            const double dre = std::fabs(got.real() - e.re), dim = std::fabs(got.imag() - e.im);
            if (!(dre <= gamma * e.wre * (1 + 0x1p-20)) || !(dim <= gamma * e.wim * (1 + 0x1p-20)))
                fail_msg("op %c%c, m=%d n=%d k=%d products=%d: C(%d,%d) errors %.3g %.3g, bounds %.3g %.3g", g.transa,
                         g.transb, g.m, g.n, g.k, rep.products, i, j, dre, dim, gamma * e.wre, gamma * e.wim);
        }
    assert_true(rep.products >= 6 && rep.products <= 36);
    assert_true(rep.margin >= 1);
    return rep;
}

// Every transpose pair, K = 1 (a single complex product: its bound gamma_2 is two roundings,
// which the certificate passes, unlike DGEMM's one), a cancelling case and wide ranges.
void test_zgemm_auto_certified(void**) {
    std::uint64_t seed = 500;
    for (const auto& s : {std::array<int, 3>{1, 1, 1}, {9, 7, 1}, {33, 17, 45}, {20, 24, 140}})
        for (char ta : {'N', 'T', 'C'})
            for (char tb : {'N', 'T', 'C'}) {
                auto p = make_problem<double>(ta, tb, s[0], s[1], s[2], {1, 0}, {0, 0}, seed++);
                check_auto_certified(p, 2);
            }
    // op(B)'s second half of each column cancels the first: the parts are tiny against w.
    auto p = make_problem<double>('N', 'N', 16, 12, 64, {1, 0}, {0, 0}, 7, 0);
    for (int j = 0; j < 12; ++j)
        for (int l = 0; l < 32; ++l) p.b[l + 32 + std::size_t(j) * 64] = -p.b[l + std::size_t(j) * 64] * (1 + 0x1p-30);
    for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 16; ++i) p.a[i + std::size_t(l + 32) * 16] = p.a[i + std::size_t(l) * 16];
    check_auto_certified(p, 1);
    // Rows and columns 2^600 apart, a zero row and a zero column.
    auto q = make_problem<double>('N', 'C', 21, 19, 30, {1, 0}, {0, 0}, 8, 0);
    for (int l = 0; l < 30; ++l)
        for (int i = 0; i < 21; ++i) q.a[i + std::size_t(l) * 21] *= std::ldexp(1.0, 60 * (i % 11) - 300);
    for (int l = 0; l < 30; ++l)
        for (int j = 0; j < 19; ++j) q.b[j + std::size_t(l) * 19] *= std::ldexp(1.0, 300 - 50 * (j % 13));
    for (int l = 0; l < 30; ++l) q.a[4 + std::size_t(l) * 21] = 0, q.b[6 + std::size_t(l) * 19] = 0;
    check_auto_certified(q, 2);
}

// One entry the certificate cannot pass: op(A)'s row 0 is (1 + i) then values near 2^-60, op(B)'s
// column 0 near 2^-60 then values near 1, so (|A||B|)_00 is about 2^-56 while eight slices of
// each operand (whose exponents are set by the other rows and columns) leave an error near
// 2^-72 in it. It is repaired, as a complex entry: both parts, conjugation, complex alpha and
// beta with C's old value. C(0, 0)'s old value is small too, so a missing repair (relative
// error about 2^-12) or a wrong sign shows against the 2^-45 tolerance.
void test_zgemm_auto_repair(void**) {
    std::uint64_t seed = 900;
    for (char ta : {'N', 'T', 'C'})
        for (char tb : {'N', 'T', 'C'}) {
            const int m = 8, n = 8, k = 12;
            auto p = make_problem<double>(ta, tb, m, n, k, {0.75, -0.5}, {-0.25, 1}, seed++);
            const auto set = [](char tr, std::vector<std::complex<double>>& x, std::int64_t ld, int r, int c,
                                std::complex<double> v) {
                (tr == 'N' ? x[r + std::size_t(c) * ld] : x[c + std::size_t(r) * ld]) = tr == 'C' ? std::conj(v) : v;
            };
            for (int l = 0; l < k; ++l) {
                const std::complex<double> a = op_at(ta, p.a.data(), int(p.g.lda), 0, l);
                const std::complex<double> b = op_at(tb, p.b.data(), int(p.g.ldb), l, 0);
                set(ta, p.a, p.g.lda, 0, l, l == 0 ? std::complex<double>(1, 1) : a * 0x1p-60);
                set(tb, p.b, p.g.ldb, l, 0, l == 0 ? b * 0x1p-60 : b);
            }
            p.c[0] *= 0x1p-58;
            const auto c0 = p.c;
            RunOptions o = kt::options(kFp64Auto, 2);
            Fp64AutoReport rep;
            o.fp64_report = &rep;
            if (const char* why = emulate(p.g, o)) fail_msg("%c%c: auto forwarded: %s", ta, tb, why);
            assert_true(rep.repaired >= 1);
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                    const std::size_t idx = i + std::size_t(j) * p.g.ldc;
                    const Parts e = exact_parts(p.g, i, j);
                    const std::complex<double> want = p.g.alpha * std::complex<double>(e.re, e.im) + p.g.beta * c0[idx];
                    const double bound =
                        0x1p-45 * (std::abs(p.g.alpha) * (e.wre + e.wim) + std::abs(p.g.beta) * std::abs(c0[idx]));
                    if (!(std::abs(p.c[idx] - want) <= bound))
                        fail_msg("op %c%c: C(%d,%d) off by %.3g, bound %.3g (repaired %ld)", ta, tb, i, j,
                                 std::abs(p.c[idx] - want), bound, rep.repaired);
                }
        }
}

// Auto's decision and result: bitwise the same on every backend (this test's backend against
// the reference one; the AMX run is the harness rerun) and thread count, repairs included.
void test_zgemm_auto_bitwise_reproducible(void**) {
    std::vector<std::complex<double>> first;
    Fp64AutoReport r0;
    for (int run = 0; run < 4; ++run) {
        auto p = make_problem<double>('C', 'N', 70, 45, kt::g_quick ? 140 : 300, {0.5, 2}, {1, -1}, 5);
        // op(A)'s row 0 is A's column 0 ('C'): as in test_zgemm_auto_repair, entry (0, 0) is repaired.
        for (int l = 1; l < p.g.k; ++l) p.a[l] *= 0x1p-60;
        p.b[0] *= 0x1p-60;
        RunOptions o = kt::options(kFp64Auto, run % 2 + 1);
        if (run >= 2) o.backend = Backend::reference;
        Fp64AutoReport rep;
        o.fp64_report = &rep;
        if (const char* why = emulate(p.g, o)) fail_msg("auto forwarded: %s", why);
        assert_true(rep.repaired >= 1);
        if (run == 0) {
            first = p.c;
            r0 = rep;
            continue;
        }
        if (std::memcmp(first.data(), p.c.data(), first.size() * sizeof first[0]) != 0)
            fail_msg("auto run %d differs (%s, %d threads)", run, backend_name(o.backend), o.threads);
        assert_int_equal(rep.products, r0.products);
        assert_int_equal(rep.repaired, r0.repaired);
        assert_true(rep.margin == r0.margin);
    }
}

// BF16's auto on ZGEMM's real GEMM splits six slices first and all eight only where entries
// fail (RunOptions::fp64_auto_depth): the same products, repairs and bits as eight from the
// start, on a call that needs no more (uniform) and on one that repairs an entry (as in
// test_zgemm_auto_bitwise_reproducible).
void test_zgemm_lazy_split_changes_no_decision(void**) {
    for (int hard = 0; hard < 2; ++hard) {
        std::vector<std::complex<double>> c[2];
        Fp64AutoReport rep[2];
        for (int deep = 0; deep < 2; ++deep) {
            auto p = make_problem<double>('C', 'N', 70, 45, 140, {0.5, 2}, {1, -1}, 5);
            if (hard) {
                for (int l = 1; l < p.g.k; ++l) p.a[l] *= 0x1p-60;
                p.b[0] *= 0x1p-60;
            }
            RunOptions o = kt::options(kFp64Auto, 2);
            o.fp64_auto_depth = deep ? kFp64Slices : kFp64AutoFirstDepth;
            o.fp64_report = &rep[deep];
            if (const char* why = emulate(p.g, o)) fail_msg("auto forwarded: %s", why);
            c[deep] = p.c;
        }
        if (std::memcmp(c[0].data(), c[1].data(), c[0].size() * sizeof c[0][0]) != 0)
            fail_msg("%s call: the lazy split changed C", hard ? "repaired" : "uniform");
        assert_int_equal(rep[0].products, rep[1].products);
        assert_int_equal(rep[0].repaired, rep[1].repaired);
        assert_true(hard ? rep[0].repaired >= 1 : rep[0].products <= fp64_products_of_depth(kFp64AutoFirstDepth));
    }
}

// A workspace cap below the call's need: the reason, and C untouched.
void test_complex_workspace_cap(void**) {
    auto p = make_problem<double>('N', 'N', 40, 40, 40, {1, 0}, {1, 0}, 9);
    const auto c0 = p.c;
    RunOptions o = kt::options(21, 1);
    o.workspace_cap_bytes = zgemm_workspace_bytes(40, 40, 40, 1, kt::g_backend) - 1;
    assert_string_equal(emulate(p.g, o), "memory:workspace-cap");
    assert_memory_equal(p.c.data(), c0.data(), c0.size() * sizeof c0[0]);
    auto q = make_problem<float>('N', 'N', 40, 40, 40, {1, 0}, {1, 0}, 9);
    const auto cf = q.c;
    o.workspace_cap_bytes = cgemm_workspace_bytes(40, 40, 40, 1, kt::g_backend) - 1;
    assert_string_equal(emulate(q.g, o), "memory:workspace-cap");
    assert_memory_equal(q.c.data(), cf.data(), cf.size() * sizeof cf[0]);
}

}  // namespace

// Cut into chunks of 64 x 64 x 256 (kernels/bf16/chunking.h), a call gives the same bits as
// in one chunk: CGEMM, ZGEMM fixed and auto, every op(), 2 threads. Quick (under the AMX
// harness): smaller, op(B) = B only.
template <typename R>
void chunks_change_no_bit(int products) {
    const char ops[] = {'N', 'T', 'C'};
    for (char ta : ops)
        for (char tb : ops) {
            if (kt::g_quick && tb != 'N') continue;
            Problem<R> whole = make_problem<R>(ta, tb, kt::g_quick ? 70 : 150, kt::g_quick ? 40 : 70, 300, {R(1.5), R(-0.5)},
                                               {R(0.25), R(1)}, 11);
            Problem<R> cut = whole;
            cut.g.a = cut.a.data();
            cut.g.b = cut.b.data();
            cut.g.c = cut.c.data();
            RunOptions o = kt::options(products, 2);
            assert_null(amxblas::kernels::emulate_gemm(whole.g, o));
            o.chunk_rows = o.chunk_cols = 64;
            o.chunk_depth = 256;
            assert_null(amxblas::kernels::emulate_gemm(cut.g, o));
            if (std::memcmp(whole.c.data(), cut.c.data(), whole.c.size() * sizeof(whole.c[0])) != 0)
                fail_msg("%c%c products %d: chunked result differs", ta, tb, products);
        }
}

void test_cgemm_chunks_change_no_bit(void**) { chunks_change_no_bit<float>(21); }
void test_zgemm_chunks_change_no_bit(void**) {
    chunks_change_no_bit<double>(21);
    chunks_change_no_bit<double>(kFp64Auto);
}

int main(int argc, char** argv) {
    if (const int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgemm_shapes),
        cmocka_unit_test(test_cgemm_chunks_change_no_bit),
        cmocka_unit_test(test_zgemm_chunks_change_no_bit),
        cmocka_unit_test(test_zgemm_shapes),
        cmocka_unit_test(test_cgemm_magnitudes),
        cmocka_unit_test(test_zgemm_magnitudes),
        cmocka_unit_test(test_cgemm_big),
        cmocka_unit_test(test_zgemm_big),
        cmocka_unit_test(test_zgemm_bitwise_reproducible),
        cmocka_unit_test(test_zgemm_auto_certified),
        cmocka_unit_test(test_zgemm_auto_repair),
        cmocka_unit_test(test_zgemm_auto_bitwise_reproducible),
        cmocka_unit_test(test_zgemm_lazy_split_changes_no_decision),
        cmocka_unit_test(test_complex_workspace_cap),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// Micro-kernel sets of other geometries than the production one (microkernel.h): the reference
// kernel compiled for 16 x 8 x 16 (B rows of 4 column pairs, so two VNNI groups) and for
// 64 x 32 x 8, run through the whole library (kernels/driver/routed_gemm.h) with RunOptions::microkernels,
// against the reference backend's set (kAmxGeometry). These sets are registered nowhere but
// here: a set of its own geometry is this file's few lines, no edit of the packer, the
// workspace or the macro-kernel.
//
// - DGEMM and ZGEMM: bit for bit the production geometry's result for every FP64 product
//   count and auto (every BK panel sum is exact in FP32, kernels/bf16/macro_kernel.h, so the tile shape cannot
//   change an FP64 bit), and the same split facts (scales, residuals, certificate norms).
// - SGEMM and CGEMM: the FP32 accumulation order changes with kstep (where K steps' partial
//   sums meet), so each result is checked against an FP64 reference within the bound
//   kernels_gemm_test.cc uses, 2^-23 (K + 8) (|alpha| |A||B| + |beta| |C|), as the production
//   geometry's result is.
// Shapes: 1, edges of every tile, K step and block (m, n, k not multiples), more than one BK
// panel and BM x BN block, all transposes (N, T, and C for complex), alpha and beta.
// Built with -ffp-contract=off, as kernels/isa/portable/microkernel_reference.h asks.
#include <cmath>
#include <complex>
#include <cstring>

#include "kernels/isa/backend.h"
#include "kernels/isa/portable/microkernel_reference.h"
#include "kernels/driver/routed_gemm.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

using Set16x8 = reference_kernel::Kernel<16, 8, 16, 4>;
using Set64x32 = reference_kernel::Kernel<64, 32, 8, 32>;

const MicroKernels kSet16x8 = Set16x8::table();
const MicroKernels kSet64x32 = Set64x32::table();
const MicroKernels* const kOtherSets[] = {&kSet16x8, &kSet64x32};

template <typename T>
struct RealOf {
    using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
    using type = R;
};
template <typename T>
constexpr bool kReal = std::is_floating_point_v<T>;

struct Shape {
    int m, n, k;
};
// 1s; edges of 8, 16, 32 and 64 tiles and of 8, 16, 32 K steps; k > BK = 256 (two panels);
// m > BM = 256 (two blocks).
const Shape kShapes[] = {{1, 1, 1}, {1, 37, 70}, {45, 1, 33}, {17, 9, 1}, {33, 47, 65}, {70, 40, 300}, {260, 20, 40}};
// op pairs: all four real ones; for complex, four that cover N, T and C on both sides.
const char kRealPairs[][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}};
const char kComplexPairs[][2] = {{'N', 'N'}, {'C', 'T'}, {'T', 'C'}, {'N', 'C'}};

template <typename T>
struct Problem {
    GemmArgs<T> g;
    std::vector<T> a, b, c;
};

// Uniform [-1, 1) entries, or (spread) each times 2^[-40, 40]: rows and columns of very
// different magnitudes for the FP64 split's per-row scaling and speculation. Row 0 of op(A)
// is zero when there is more than one row (a zero row for auto's certificate).
template <typename T>
Problem<T> make_problem(char ta, char tb, Shape s, T alpha, T beta, std::uint64_t seed, bool spread) {
    Problem<T> p;
    const int arows = ta == 'N' ? s.m : s.k, acols = ta == 'N' ? s.k : s.m;
    const int brows = tb == 'N' ? s.k : s.n, bcols = tb == 'N' ? s.n : s.k;
    const int lda = arows + 1, ldb = brows + 2, ldc = s.m + 3;
    kt::Rng r(seed);
    const auto fill = [&](std::size_t n) {
        std::vector<T> v(n);
        for (auto& x : v) {
            const double u = r.uniform(), e = spread ? std::floor(80 * (r.uniform() + 1) / 2) - 40 : 0;
            if constexpr (kReal<T>) x = T(std::ldexp(u, int(e)));
            else x = T(typename T::value_type(std::ldexp(u, int(e))), typename T::value_type(r.uniform()));
        }
        return v;
    };
    p.a = fill(std::size_t(lda) * acols);
    p.b = fill(std::size_t(ldb) * bcols);
    p.c = fill(std::size_t(ldc) * s.n);
    if (s.m > 1)
        for (int l = 0; l < s.k; ++l) p.a[ta == 'N' ? std::size_t(l) * lda : l] = T(0);
    p.g = GemmArgs<T>{ta, tb, s.m, s.n, s.k, alpha, p.a.data(), lda, p.b.data(), ldb, beta, p.c.data(), ldc};
    return p;
}

RunOptions options_for(const MicroKernels* set, int products, int threads) {
    RunOptions o = kt::options(products, threads);
    o.backend = Backend::reference;
    o.microkernels = set;
    return o;
}

// C after the call; *why (when given) gets the forward reason, else a forward fails the test.
template <typename T>
std::vector<T> run(const Problem<T>& p, const MicroKernels* set, int products, int threads,
                   Fp64AutoReport* report = nullptr, const char** why = nullptr) {
    std::vector<T> c = p.c;
    GemmArgs<T> g = p.g;
    g.c = c.data();
    RunOptions o = options_for(set, products, threads);
    o.fp64_report = report;
    const char* w = amxblas::kernels::emulate_gemm(g, o);
    if (why) *why = w;
    else if (w) fail_msg("forwarded: %s", w);
    return c;
}

// Every set's geometry is one the packer, the workspace and the macro-kernel accept; the
// production sets all have kAmxGeometry (the fast packers' one).
void test_geometries(void**) {
    for (Backend b : kAllBackends) {
        if (!backend_built(b)) continue;
        assert_true(microkernels_for(b).geometry == kAmxGeometry);
    }
    for (const MicroKernels* set : kOtherSets) {
        assert_true(geometry_ok(set->geometry));
        assert_true(set->geometry != kAmxGeometry);
    }
    static_assert(!geometry_ok(TileGeometry{16, 8, 15, 8}), "kstep must be even");
    static_assert(!geometry_ok(TileGeometry{16, 8, 16, 3}), "nr_vnni must divide nr");
    static_assert(!geometry_ok(TileGeometry{24, 8, 16, 8}), "mr must divide BM");
}

// Every product count for DGEMM; for ZGEMM (four times the work on the scalar kernel), and for
// DGEMM in the quick mode (AMXBLAS_TEST_QUICK: the sanitizer build), the fewest, the most and
// auto.
template <typename T>
void check_fp64_bitwise(bool spread) {
    using R = typename RealOf<T>::type;
    const std::vector<int> products = kReal<T> && !kt::g_quick ? std::vector<int>{6, 10, 15, 21, 28, 36, kFp64Auto}
                                                               : std::vector<int>{6, 36, kFp64Auto};
    std::uint64_t seed = spread ? 500 : 100;
    int calls = 0;
    for (const Shape& s : kShapes)
        for (const auto& ops : kReal<T> ? kRealPairs : kComplexPairs) {
                const char ta2 = ops[0], tb = ops[1];
                const Problem<T> p = make_problem<T>(ta2, tb, s, T(R(1.5)), T(R(-0.5)), ++seed, spread);
                for (int np : products) {
                    // Auto may forward (DGEMM with K = 1 does: accuracy:uncertified); then the
                    // same reason, and C untouched, is the same result.
                    Fp64AutoReport want_report, got_report;
                    const char *want_why, *got_why;
                    const std::vector<T> want = run(p, nullptr, np, 2, &want_report, &want_why);
                    if (want_why && np != kFp64Auto) fail_msg("forwarded: %s", want_why);
                    for (const MicroKernels* set : kOtherSets) {
                        const std::vector<T> got = run(p, set, np, 2, &got_report, &got_why);
                        assert_true((got_why == nullptr) == (want_why == nullptr));
                        if (want_why) assert_string_equal(got_why, want_why);
                        if (std::memcmp(got.data(), want.data(), want.size() * sizeof(T)) != 0)
                            fail_msg("%s %dx%dx%d %c%c products %d: FP64 bits differ from the 32x32x32 set's (geometry %dx%dx%d)",
                                     kReal<T> ? "dgemm" : "zgemm", s.m, s.n, s.k, ta2, tb, np,
                                     set->geometry.mr, set->geometry.nr, set->geometry.kstep);
                        if (np == kFp64Auto && !want_why) {
                            assert_int_equal(got_report.products, want_report.products);
                            assert_int_equal(got_report.repaired, want_report.repaired);
                        }
                        ++calls;
                    }
                }
        }
    std::printf("# %s%s: %d calls bit for bit\n", kReal<T> ? "dgemm" : "zgemm",
                spread ? " (spread)" : "", calls);
}

void test_dgemm_bitwise(void**) { check_fp64_bitwise<double>(false); }
void test_dgemm_bitwise_spread(void**) { check_fp64_bitwise<double>(true); }
void test_zgemm_bitwise(void**) { check_fp64_bitwise<std::complex<double>>(false); }

// The split facts behind the bits: prepare_dgemm on auto (all eight slices, norms) reports the
// same scales, residual bounds, zero rows and certificate norms for every geometry.
void test_fp64_split_facts(void**) {
    const auto eight = [](const MicroKernels* set) {
        RunOptions o = options_for(set, kFp64Auto, 2);
        o.fp64_auto_depth = kFp64Slices;
        return o;
    };
    for (const Shape& s : kShapes) {
        const Problem<double> p = make_problem<double>('T', 'N', s, 1.0, 0.0, 900 + s.k, true);
        PreparedDgemm want, got;
        assert_null(prepare_dgemm(p.g, eight(nullptr), &want));
        for (const MicroKernels* set : kOtherSets) {
            assert_null(prepare_dgemm(p.g, eight(set), &got));
            for (const auto* f : {&want.a, &want.b}) {
                const Fp64SplitFacts& g = f == &want.a ? got.a : got.b;
                assert_int_equal(g.active, f->active);
                assert_memory_equal(g.v, f->v, sizeof f->v);
                assert_memory_equal(g.rho, f->rho, sizeof f->rho);
                assert_memory_equal(g.norms, f->norms, sizeof(double) * f->slices * f->outer);
                assert_memory_equal(g.zero, f->zero, std::size_t(f->outer));
            }
            const std::vector<double> lg = kt::whole_lower(&got, s.m, s.n), lw = kt::whole_lower(&want, s.m, s.n);
            assert_memory_equal(lg.data(), lw.data(), sizeof(double) * s.m * s.n);
        }
    }
}

// |C - C_exact| <= 2^-23 (K + 8) (|alpha| (|A||B|)_ij + |beta| |C0_ij|), C_exact in FP64 (its
// own error is far below the bound). Complex: each part is a real GEMM 2K deep whose terms
// |Re a||Re b| + |Im a||Im b| are at most |a||b|, so 2K for K and a factor 2 (over the sqrt(2)
// of the modulus).
template <typename T>
void check_fp32_bound(const Problem<T>& p, const std::vector<T>& c, const char* what) {
    const GemmArgs<T>& g = p.g;
    const auto at = [](char t, const T* x, std::int64_t ld, int i, int l) -> std::complex<double> {
        const std::complex<double> v = (t == 'N') ? std::complex<double>(x[i + std::size_t(l) * ld]) : std::complex<double>(x[l + std::size_t(i) * ld]);
        return t == 'C' ? std::conj(v) : v;
    };
    const std::complex<double> alpha(g.alpha), beta(g.beta);
    for (int j = 0; j < g.n; ++j)
        for (int i = 0; i < g.m; ++i) {
            std::complex<double> dot = 0;
            double ab = 0;
            for (int l = 0; l < g.k; ++l) {
                const std::complex<double> x = at(g.transa, g.a, g.lda, i, l), y = at(g.transb, g.b, g.ldb, l, j);
                dot += x * y;
                ab += std::abs(x) * std::abs(y);
            }
            const std::size_t idx = i + std::size_t(j) * g.ldc;
            const std::complex<double> c0(p.c[idx]);
            const std::complex<double> exact = alpha * dot + beta * c0;
            const double scale = kReal<T> ? 1 : 2, depth = kReal<T> ? g.k : 2 * g.k;
            const double bound = scale * 0x1p-23 * (depth + 8) * (std::abs(alpha) * ab + std::abs(beta) * std::abs(c0));
            const double err = std::abs(std::complex<double>(c[idx]) - exact);
            if (!(err <= bound))
                fail_msg("%s %dx%dx%d %c%c (%d, %d): error %g above the bound %g", what, g.m, g.n, g.k, g.transa, g.transb,
                         i, j, err, bound);
        }
}

template <typename T>
void check_fp32() {
    using R = typename RealOf<T>::type;
    std::uint64_t seed = 3000;
    long differ = 0, entries = 0;
    for (const Shape& s : kShapes)
        for (const auto& ops : kReal<T> ? kRealPairs : kComplexPairs) {
                const char ta = ops[0], tb = ops[1];
                const Problem<T> p = make_problem<T>(ta, tb, s, T(R(1.5)), T(R(0.25)), ++seed, false);
                const std::vector<T> want = run(p, nullptr, 21, 2);
                check_fp32_bound(p, want, "32x32x32");
                for (const MicroKernels* set : kOtherSets) {
                    const std::vector<T> got = run(p, set, 21, 2);
                    check_fp32_bound(p, got, "other geometry");
                    for (int j = 0; j < s.n; ++j)
                        for (int i = 0; i < s.m; ++i) {
                            const std::size_t idx = i + std::size_t(j) * p.g.ldc;
                            differ += std::memcmp(&got[idx], &want[idx], sizeof(T)) != 0;
                            ++entries;
                        }
                }
        }
    // Not a requirement, only what the order change did (some K = 1 shapes cannot differ).
    std::printf("# %s: %ld of %ld entries differ in some bit from the 32x32x32 set's, all within the bound\n",
                kReal<T> ? "sgemm" : "cgemm", differ, entries);
}

void test_sgemm_bound(void**) { check_fp32<float>(); }
void test_cgemm_bound(void**) { check_fp32<std::complex<float>>(); }

// The workspace follows the geometry: padding to 16 x 8 tiles and 16-deep K steps takes less
// than to 32s for a 17 x 9 x 17 call, and a cap of one byte less than that makes it forward.
void test_workspace(void**) {
    const Problem<float> p = make_problem<float>('N', 'N', {17, 9, 17}, 1.0f, 0.0f, 7, false);
    RunOptions o = options_for(&kSet16x8, 21, 1);
    std::vector<float> c = p.c;
    GemmArgs<float> g = p.g;
    g.c = c.data();
    o.workspace_cap_bytes = sgemm_workspace_bytes(17, 9, 17, 1);
    assert_null(amxblas::kernels::emulate_gemm(g, o));  // the 32x32x32 size is more than enough
    // Three slices of A (17 x 17 padded to 32 x 32: 2048 bytes) and of B (9 x 17 padded to 16
    // columns x 32 K: 1024 bytes), each staggered by 4160 bytes (kernels/bf16/workspace_layout.cc), then the 256 x 256
    // FP32 block accumulator and one 16 x 8 FP32 tile; the 32x32x32 set needs 2048 bytes per B
    // slice and a 4096-byte tile. The smallest cap that runs, found by halving:
    std::size_t lo = 0, hi = o.workspace_cap_bytes;
    while (hi - lo > 1) {
        o.workspace_cap_bytes = (lo + hi) / 2;
        (amxblas::kernels::emulate_gemm(g, o) ? lo : hi) = o.workspace_cap_bytes;
    }
    assert_int_equal(hi, 3 * (2048 + 4160) + 3 * (1024 + 4160) + 256 * 256 * 4 + 16 * 8 * 4);
}

}  // namespace

int main(int argc, char** argv) {
    if (const int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometries),
        cmocka_unit_test(test_dgemm_bitwise),
        cmocka_unit_test(test_dgemm_bitwise_spread),
        cmocka_unit_test(test_zgemm_bitwise),
        cmocka_unit_test(test_fp64_split_facts),
        cmocka_unit_test(test_sgemm_bound),
        cmocka_unit_test(test_cgemm_bound),
        cmocka_unit_test(test_workspace),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

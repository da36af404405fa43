// The micro-kernel contract (kernels/isa/microkernel.h): the reference kernel against hand-computed
// tiles, then the selected backend's kernels, in the backend's own tile geometry, against exact
// sums (small integers) and within FP32 accuracy (general values).
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/isa/backend.h"
#include "kernels/isa/microkernel.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

// One or more packed K steps of A and B in geometry g (microkernel.h draws the layout),
// addressed as logical A(r, k) and B(k, n).
struct Tiles {
    TileGeometry g;
    int ksteps;
    std::vector<bf16_t> a, b;
    explicit Tiles(int ks, const TileGeometry& geom = kAmxGeometry)
        : g(geom), ksteps(ks), a(std::size_t(ks) * g.a_block_elems(), 0), b(std::size_t(ks) * g.b_block_elems(), 0) {}
    bf16_t& A(int r, int k) { return a[std::size_t(k / g.kstep) * g.a_block_elems() + r * g.kstep + k % g.kstep]; }
    bf16_t& B(int k, int n) {
        const int kk = k % g.kstep, v = g.nr_vnni;
        return b[std::size_t(k / g.kstep) * g.b_block_elems() + (n / v) * (g.kstep * v) + (kk / 2) * (2 * v) + (n % v) * 2 +
                 kk % 2];
    }
    // sum_k A(r, k) B(k, n) over the slices' K, in double.
    double dot(int r, int n) {
        double s = 0;
        for (int k = 0; k < ksteps * g.kstep; ++k) s += double(bf16_to_float(A(r, k))) * double(bf16_to_float(B(k, n)));
        return s;
    }
};

std::vector<float> run_product(const MicroKernels& mk, Tiles& t, int ldc = kTile) {
    std::vector<float> c(std::size_t(t.g.mr) * ldc, NAN);  // the kernel must not read c
    mk.thread_begin();
    mk.product(t.ksteps, t.a.data(), t.b.data(), c.data(), ldc);
    mk.thread_end();
    return c;
}

void test_reference_identity(void**) {
    Tiles t(2);
    for (int r = 0; r < kTile; ++r) t.A(r, r + kTile) = bf16_rne(1.0f);  // identity in K step 1
    for (int k = 0; k < 2 * kTile; ++k)
        for (int n = 0; n < kTile; ++n) t.B(k, n) = bf16_rne(float((k * 7 + n * 3) % 17 - 8));
    const auto c = run_product(reference_microkernels(), t);
    for (int r = 0; r < kTile; ++r)
        for (int n = 0; n < kTile; ++n) assert_true(c[r * kTile + n] == bf16_to_float(t.B(r + kTile, n)));
}

void test_reference_denormals(void**) {
    Tiles t(1);
    // Denormal input counts as zero: 2^-127 * 2^100 would be 2^-27 otherwise.
    t.A(0, 0) = 0x0040;
    t.B(0, 0) = bf16_rne(0x1p100f);
    // Denormal result flushes to zero: 2^-70 * 2^-70 = 2^-140.
    t.A(2, 3) = bf16_rne(0x1p-70f);
    t.B(3, 5) = bf16_rne(0x1p-70f);
    // A negative denormal input is a zero too.
    t.A(4, 1) = 0x8001;
    t.B(1, 7) = bf16_rne(0x1p120f);
    const auto c = run_product(reference_microkernels(), t);
    assert_true(c[0 * kTile + 0] == 0.0f);
    assert_true(c[2 * kTile + 5] == 0.0f);
    assert_true(c[4 * kTile + 7] == 0.0f);
}

void test_reference_rounding_order(void**) {
    Tiles t(1);
    // The SDM order: per output, an "even" chain over K = 0, 2, 4, ... and an "odd" chain over
    // K = 1, 3, 5, ..., each from zero, then dst += even + odd.
    // Row 1, column 0: even = 1 + 2^-24 (K = 0, 2), a tie that rounds to 1; odd = 2^-24
    // (K = 1); 1 + 2^-24 is a tie again: c = 1. Summed exactly it would be 1 + 2^-23.
    t.A(1, 0) = bf16_rne(1.0f), t.B(0, 0) = bf16_rne(1.0f);
    t.A(1, 1) = bf16_rne(0x1p-12f), t.B(1, 0) = bf16_rne(0x1p-12f);
    t.A(1, 2) = bf16_rne(0x1p-12f), t.B(2, 0) = bf16_rne(0x1p-12f);
    // Row 3, column 9: even = 1 + 2^-24 -> 1 (tie); odd = 2^-23; c = 1 + 2^-23 exactly. One
    // chain straight into dst (the older manuals' order) would give 1 + 2^-23 + 2^-24, a tie
    // that rounds up to 1 + 2^-22: this element tells the two orders apart.
    t.A(3, 0) = bf16_rne(1.0f), t.B(0, 9) = bf16_rne(1.0f);
    t.A(3, 1) = bf16_rne(0x1p-12f), t.B(1, 9) = bf16_rne(0x1p-11f);
    t.A(3, 2) = bf16_rne(0x1p-12f), t.B(2, 9) = bf16_rne(0x1p-12f);
    const auto c = run_product(reference_microkernels(), t);
    assert_true(c[1 * kTile + 0] == 1.0f);
    assert_true(c[3 * kTile + 9] == 1.0f + 0x1p-23f);
}

void test_reference_chain_order(void**) {
    // One nonzero entry per slice: the chain sums A_i B_j over the six retained (i, j) only.
    Tiles s[3] = {Tiles(1), Tiles(1), Tiles(1)};
    for (int i = 0; i < 3; ++i) {
        s[i].A(0, 0) = bf16_rne(float(1 << (4 * i)));   // 1, 16, 256
        s[i].B(0, 0) = bf16_rne(float(1 << (10 * i)));  // 1, 2^10, 2^20
    }
    Fp32Panels p;
    for (int i = 0; i < 3; ++i) p.a[i] = s[i].a.data(), p.b[i] = s[i].b.data();
    std::vector<float> c(kStepElems, NAN);
    reference_fp32_chain(1, p, c.data(), kTile);
    // A0B0 + A0B1 + A1B0 + A0B2 + A1B1 + A2B0 (exact); A1B2 = 2^24, A2B1 = 2^18, A2B2 = 2^28
    // are left out.
    assert_true(c[0] == float(1 + 1024 + 16 + (1 << 20) + 16384 + 256));
    assert_true(c[1] == 0.0f);
}

// The selected backend, in its own geometry: small integers keep every sum exact, so the results
// must be the exact sums bit for bit whatever the order inside the kernel (and whatever the
// geometry: no oracle of the backend's geometry is needed).
void fill_small_ints(Tiles& t, kt::Rng& r) {
    for (auto& x : t.a) x = bf16_rne(float(int(r.uniform() * 9)));
    for (auto& x : t.b) x = bf16_rne(float(int(r.uniform() * 9)));
}

void test_backend_product_matches_reference(void**) {
    const MicroKernels mk = microkernels_for(kt::g_backend);
    const TileGeometry& geom = mk.geometry;
    kt::Rng r(5);
    for (int ks : {1, 3, 8}) {
        Tiles t(ks, geom);
        fill_small_ints(t, r);
        const int ldc = geom.nr + 8;  // a row stride wider than the tile
        const auto got = run_product(mk, t, ldc);
        for (int i = 0; i < geom.mr; ++i)
            for (int j = 0; j < ldc; ++j) {
                const float g = got[i * ldc + j];
                if (j >= geom.nr) {
                    assert_true(std::isnan(g));  // outside the tile: untouched
                    continue;
                }
                const float w = float(t.dot(i, j));  // an integer below 2^24: exact
                if (!(w == g)) fail_msg("ks=%d (%d,%d): %a vs %a", ks, i, j, double(g), double(w));
            }
    }
}

// The chain's six products A0B0 + A0B1 + A1B0 + A0B2 + A1B1 + A2B0, in double.
double chain_sum(Tiles (&s)[3], int i, int j) {
    static constexpr int kChain[6][2] = {{1, 1}, {1, 0}, {2, 0}, {0, 0}, {0, 1}, {0, 2}};
    double sum = 0;
    for (const auto& ij : kChain)
        for (int k = 0; k < s[0].ksteps * s[0].g.kstep; ++k)
            sum += double(bf16_to_float(s[ij[0]].A(i, k))) * double(bf16_to_float(s[ij[1]].B(k, j)));
    return sum;
}

void test_backend_chain_matches_reference(void**) {
    const MicroKernels mk = microkernels_for(kt::g_backend);
    const TileGeometry& geom = mk.geometry;
    kt::Rng r(9);
    for (int ks : {1, 8}) {
        Tiles s[3] = {Tiles(ks, geom), Tiles(ks, geom), Tiles(ks, geom)};
        for (auto& t : s) fill_small_ints(t, r);
        Fp32Panels p;
        for (int i = 0; i < 3; ++i) p.a[i] = s[i].a.data(), p.b[i] = s[i].b.data();
        std::vector<float> got(std::size_t(geom.mr) * geom.nr, NAN);
        mk.thread_begin();
        mk.fp32_chain(ks, p, got.data(), geom.nr);
        mk.thread_end();
        for (int i = 0; i < geom.mr; ++i)
            for (int j = 0; j < geom.nr; ++j) {
                const float w = float(chain_sum(s, i, j));  // an integer below 2^24: exact
                if (!(got[i * geom.nr + j] == w)) fail_msg("ks=%d (%d,%d): %a vs %a", ks, i, j, double(got[i * geom.nr + j]), double(w));
            }
        // General values: sums round, so only agreement to FP32 accuracy is required: within
        // 2^-20 of the largest possible sum, 6 products of K = ks * kstep terms below 1.
        for (auto& t : s) {
            for (auto& x : t.a) x = bf16_rne(float(r.uniform()));
            for (auto& x : t.b) x = bf16_rne(float(r.uniform()));
        }
        mk.thread_begin();
        mk.fp32_chain(ks, p, got.data(), geom.nr);
        mk.thread_end();
        for (int i = 0; i < geom.mr; ++i)
            for (int j = 0; j < geom.nr; ++j) {
                const double w = chain_sum(s, i, j), g = got[i * geom.nr + j];
                if (!(std::fabs(w - g) <= 0x1p-20 * (6 * geom.kstep * ks))) fail_msg("(%d,%d): %a %a", i, j, g, w);
            }
    }
}

// Sanitizer builds compile the reference kernel uninstrumented and check its memory whole at
// each call instead (kernels/isa/portable/microkernel_reference.cc): a B panel one K step's worth short of
// 24 values must abort the call, as an ASan finding would. Run in a child, which must die of
// SIGABRT; the parent's own calls are untouched. Registered only where it applies (main).
#if defined(__SANITIZE_ADDRESS__)
void test_reference_checks_its_memory(void**) {
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        std::freopen("/dev/null", "w", stderr);
        std::vector<bf16_t> a(kAmxGeometry.a_block_elems()), b(kAmxGeometry.b_block_elems() - 24);
        std::vector<float> c(std::size_t(kTile) * kTile);
        reference_microkernels().product(1, a.data(), b.data(), c.data(), kTile);
        std::_Exit(0);  // not reached when the check works
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}
#endif

}  // namespace

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    std::vector<CMUnitTest> tests = {
        cmocka_unit_test(test_reference_identity),
        cmocka_unit_test(test_reference_denormals),
        cmocka_unit_test(test_reference_rounding_order),
        cmocka_unit_test(test_reference_chain_order),
        cmocka_unit_test(test_backend_product_matches_reference),
        cmocka_unit_test(test_backend_chain_matches_reference),
    };
#if defined(__SANITIZE_ADDRESS__)
    // The memory check is the reference backend's, in sanitizer builds only: once, in its run.
    if (kt::g_backend == Backend::reference) tests.push_back(cmocka_unit_test(test_reference_checks_its_memory));
#endif
    return _cmocka_run_group_tests("kernels_microkernel_test", tests.data(), tests.size(), nullptr, nullptr);
}

// The micro-kernel contract (kernels/microkernel.h): the reference kernel against hand-computed
// tiles, then the selected backend's kernels against the reference.
#include "kernels/backend.h"
#include "kernels/microkernel.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

// One or more packed K steps of A and B, addressed as logical A(r, k) and B(k, n).
struct Tiles {
    int ksteps;
    std::vector<bf16_t> a, b;
    explicit Tiles(int ks) : ksteps(ks), a(std::size_t(ks) * kStepElems, 0), b(std::size_t(ks) * kStepElems, 0) {}
    bf16_t& A(int r, int k) { return a[(k / kTile) * kStepElems + r * kTile + k % kTile]; }
    bf16_t& B(int k, int n) {
        const int kk = k % kTile;
        return b[(k / kTile) * kStepElems + (n / 16) * kHalfElems + (kk / 2) * kTile + (n % 16) * 2 + kk % 2];
    }
};

std::vector<float> run_product(const MicroKernels& mk, Tiles& t, int ldc = kTile) {
    std::vector<float> c(std::size_t(kTile) * ldc, NAN);  // the kernel must not read c
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

// The selected backend against the reference: small integers keep every sum exact, so the
// results must agree bit for bit whatever the order inside the kernel.
void fill_small_ints(Tiles& t, kt::Rng& r) {
    for (auto& x : t.a) x = bf16_rne(float(int(r.uniform() * 9)));
    for (auto& x : t.b) x = bf16_rne(float(int(r.uniform() * 9)));
}

void test_backend_product_matches_reference(void**) {
    const MicroKernels mk = microkernels_for(kt::g_backend);
    kt::Rng r(5);
    for (int ks : {1, 3, 8}) {
        Tiles t(ks);
        fill_small_ints(t, r);
        const int ldc = 40;  // a row stride wider than the tile
        const auto want = run_product(reference_microkernels(), t, ldc);
        const auto got = run_product(mk, t, ldc);
        for (int i = 0; i < kTile; ++i)
            for (int j = 0; j < ldc; ++j) {
                const float w = want[i * ldc + j], g = got[i * ldc + j];
                if (j >= kTile) assert_true(std::isnan(g));  // outside the tile: untouched
                else if (!(w == g)) fail_msg("ks=%d (%d,%d): %a vs %a", ks, i, j, double(g), double(w));
            }
    }
}

void test_backend_chain_matches_reference(void**) {
    const MicroKernels mk = microkernels_for(kt::g_backend);
    kt::Rng r(9);
    for (int ks : {1, 8}) {
        Tiles s[3] = {Tiles(ks), Tiles(ks), Tiles(ks)};
        for (auto& t : s) fill_small_ints(t, r);
        Fp32Panels p;
        for (int i = 0; i < 3; ++i) p.a[i] = s[i].a.data(), p.b[i] = s[i].b.data();
        std::vector<float> want(kStepElems, NAN), got(kStepElems, NAN);
        reference_fp32_chain(ks, p, want.data(), kTile);
        mk.thread_begin();
        mk.fp32_chain(ks, p, got.data(), kTile);
        mk.thread_end();
        assert_memory_equal(want.data(), got.data(), want.size() * sizeof(float));
        // General values: sums round, so only agreement to FP32 accuracy is required.
        for (auto& t : s) {
            for (auto& x : t.a) x = bf16_rne(float(r.uniform()));
            for (auto& x : t.b) x = bf16_rne(float(r.uniform()));
        }
        reference_fp32_chain(ks, p, want.data(), kTile);
        mk.thread_begin();
        mk.fp32_chain(ks, p, got.data(), kTile);
        mk.thread_end();
        for (int i = 0; i < kStepElems; ++i)
            if (!(std::fabs(want[i] - got[i]) <= 0x1p-20f * (6 * 32 * ks))) fail_msg("%d: %a %a", i, want[i], got[i]);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_identity),
        cmocka_unit_test(test_reference_denormals),
        cmocka_unit_test(test_reference_rounding_order),
        cmocka_unit_test(test_reference_chain_order),
        cmocka_unit_test(test_backend_product_matches_reference),
        cmocka_unit_test(test_backend_chain_matches_reference),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

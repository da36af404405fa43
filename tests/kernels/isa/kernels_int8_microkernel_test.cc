// The INT8 micro-kernel contract (product_s8 of kernels/isa/microkernel.h) bit for bit against
// exact sums and against reference_product_s8, for the kernel AMXBLAS_TEST_INT8_KERNEL names:
//   reference     reference_product_s8 (the default): checks the oracle and this file's packing
//   avx512_vnni   the VPDPBUSD kernel (kernels/isa/avx512/microkernel_avx512_int8.cc)
// on random panels over the whole byte range, the -128 / 127 extremes, K steps 1..8, a panel
// 2^16 deep (the contract's limit, where the VNNI kernel's offset sums come within 0.4% of
// 2^31), and tiles whose row stride is wider than nr.
//
// Where the kernel was not built or this CPU has no AVX512_VNNI every case is a cmocka skip
// and the process then exits 77, which CTest reports as skipped (tests/kernels/CMakeLists.txt),
// as the per-backend runs of the other kernel tests do: never a pass for code that did not run.
// The project's headers and the C++ library first: cmocka.h's fail() macro breaks <ios>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/isa/backend.h"
#include "kernels/isa/microkernel.h"
#include "kernels/runtime/cpu_features.h"
#include "tests/common/rng.h"
#if AMXBLAS_BUILT_AVX512_VNNI
#include "kernels/isa/avx512/microkernel_avx512_int8.h"
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include <cmocka.h>
}

using namespace amxblas::kernels;

namespace {

constexpr TileGeometry kG = kAmxInt8Geometry;
constexpr std::int32_t kUntouched = 0x5A5A5A5A;  // C outside the tile, and C before the call

const char* g_name = "reference";
Int8Product g_kernel = nullptr;  // the kernel under test
bool g_runs = false;             // built, and this CPU runs it

// A panel of `ksteps` packed INT8 blocks (microkernel.h's layout), addressed as logical
// A(r, k) and B(k, n), with row-major copies of the logical matrices for the exact sums.
struct Panels {
    int ksteps;
    std::vector<std::int8_t> a, b;
    explicit Panels(int ks)
        : ksteps(ks), a(std::size_t(ks) * kG.a_block_elems()), b(std::size_t(ks) * kG.b_block_elems()) {}
    int depth() const { return ksteps * kG.kstep; }
    std::int8_t& A(int r, int k) {
        return a[std::size_t(k / kG.kstep) * kG.a_block_elems() + r * kG.kstep + k % kG.kstep];
    }
    std::int8_t& B(int k, int n) {
        const int kk = k % kG.kstep, v = kG.nr_vnni;
        return b[std::size_t(k / kG.kstep) * kG.b_block_elems() + (n / v) * (kG.kstep * v) + (kk / 4) * (4 * v) +
                 (n % v) * 4 + kk % 4];
    }
    // Every A(r, k) = fa(r, k) and B(k, n) = fb(k, n).
    template <typename FA, typename FB>
    void fill(FA fa, FB fb) {
        for (int r = 0; r < kG.mr; ++r)
            for (int k = 0; k < depth(); ++k) A(r, k) = std::int8_t(fa(r, k));
        for (int k = 0; k < depth(); ++k)
            for (int n = 0; n < kG.nr; ++n) B(k, n) = std::int8_t(fb(k, n));
    }
    // sum_k A(r, k) B(k, n) in 64 bits, independently of any kernel: mr x nr, row-major.
    std::vector<std::int64_t> exact() {
        const int d = depth();
        std::vector<std::int32_t> al(std::size_t(kG.mr) * d), bt(std::size_t(kG.nr) * d);
        for (int r = 0; r < kG.mr; ++r)
            for (int k = 0; k < d; ++k) al[std::size_t(r) * d + k] = A(r, k);
        for (int n = 0; n < kG.nr; ++n)
            for (int k = 0; k < d; ++k) bt[std::size_t(n) * d + k] = B(k, n);
        std::vector<std::int64_t> s(std::size_t(kG.mr) * kG.nr);
        for (int r = 0; r < kG.mr; ++r)
            for (int n = 0; n < kG.nr; ++n) {
                std::int64_t t = 0;
                for (int k = 0; k < d; ++k) t += std::int64_t(al[std::size_t(r) * d + k]) * bt[std::size_t(n) * d + k];
                s[std::size_t(r) * kG.nr + n] = t;
            }
        return s;
    }
};

// Runs the kernel under test into a C of row stride ldc (one guard row below the tile, all
// of it prefilled: the kernel must overwrite the tile and touch nothing else) and checks it
// bit for bit against the exact sums and against reference_product_s8. Returns the tile.
std::vector<std::int32_t> check(Panels& p, int ldc, const char* what) {
    const std::size_t elems = std::size_t(kG.mr + 1) * ldc;
    std::vector<std::int32_t> got(elems, kUntouched), ref(elems, kUntouched);
    g_kernel(p.ksteps, p.a.data(), p.b.data(), got.data(), ldc);
    reference_product_s8(p.ksteps, p.a.data(), p.b.data(), ref.data(), ldc);
    const std::vector<std::int64_t> want = p.exact();
    for (int r = 0; r <= kG.mr; ++r)
        for (int n = 0; n < ldc; ++n) {
            const std::int32_t g = got[std::size_t(r) * ldc + n];
            if (r == kG.mr || n >= kG.nr) {
                if (g != kUntouched) fail_msg("%s ks=%d ldc=%d: C(%d, %d) outside the tile written", what, p.ksteps, ldc, r, n);
                continue;
            }
            const std::int64_t w = want[std::size_t(r) * kG.nr + n];
            // The contract's own promise (and this test's): the exact sum fits INT32.
            if (w != std::int32_t(w)) fail_msg("%s: exact sum %lld is no INT32: the test is wrong", what, (long long)w);
            const std::int32_t rf = ref[std::size_t(r) * ldc + n];
            if (g != w || rf != w)
                fail_msg("%s ks=%d ldc=%d C(%d, %d): %s %d, reference %d, exact %lld", what, p.ksteps, ldc, r, n, g_name,
                         int(g), int(rf), (long long)w);
        }
    std::vector<std::int32_t> tile(std::size_t(kG.mr) * kG.nr);
    for (int r = 0; r < kG.mr; ++r) std::memcpy(&tile[std::size_t(r) * kG.nr], &got[std::size_t(r) * ldc], kG.nr * sizeof(std::int32_t));
    return tile;
}

int random_byte(amxblas::test::Rng& rng) { return rng.below(256) - 128; }
int random_extreme(amxblas::test::Rng& rng) { return rng.chance(0.5) ? -128 : 127; }

// Whole-range random bytes, K steps 1..8, C prefilled (the kernel overwrites, never adds).
void test_random_panels(void**) {
    if (!g_runs) skip();
    amxblas::test::Rng rng(24);
    for (int ks = 1; ks <= 8; ++ks) {
        Panels p(ks);
        p.fill([&](int, int) { return random_byte(rng); }, [&](int, int) { return random_byte(rng); });
        check(p, kG.nr, "random");
    }
}

// The extremes: uniform panels of -128 and 127 in all four pairings (closed forms), a random
// mix of the two, and rows and columns that alternate between them, at K steps 1, 2 and 8.
void extreme_panels(int ks, const char* what) {
    const int d = ks * kG.kstep;
    const int extremes[2] = {-128, 127};
    for (int x : extremes)
        for (int y : extremes) {
            Panels p(ks);
            p.fill([&](int, int) { return x; }, [&](int, int) { return y; });
            const auto c = check(p, kG.nr, what);
            for (std::int32_t v : c) assert_int_equal(v, std::int64_t(x) * y * d);
        }
    amxblas::test::Rng rng(std::uint64_t(ks) * 7 + 1);
    Panels mix(ks);
    mix.fill([&](int, int) { return random_extreme(rng); }, [&](int, int) { return random_extreme(rng); });
    check(mix, kG.nr, what);
    // Row r of A all 127 or all -128, column n of B the same by n's parity: every row block
    // and both column groups see the largest offset sums (255 x -128 per K value) and the
    // largest corrections in one call.
    Panels stripes(ks);
    stripes.fill([](int r, int) { return r % 2 ? -128 : 127; }, [](int, int n) { return (n / 3) % 2 ? 127 : -128; });
    check(stripes, kG.nr, what);
}

void test_extreme_panels(void**) {
    if (!g_runs) skip();
    for (int ks : {1, 2, 8}) extreme_panels(ks, "extremes");
}

// kInt8MaxPanelDepth: 1024 K steps, 2^16 K values. A = 127, B = -128 takes the VNNI kernel's
// offset product to 255 * -128 * 2^16 = -2139095040, 8388608 from -2^31.
void test_deep_panel(void**) {
    if (!g_runs) skip();
    constexpr int ks = kInt8MaxPanelDepth / kG.kstep;
    static_assert(ks * kG.kstep == kInt8MaxPanelDepth, "whole K steps");
    extreme_panels(ks, "deep");
    amxblas::test::Rng rng(65536);
    Panels p(ks);
    p.fill([&](int, int) { return random_byte(rng); }, [&](int, int) { return random_byte(rng); });
    check(p, kG.nr, "deep random");
}

// Row strides wider than the tile (an even one and an odd one, whose rows are not 64-byte
// aligned): the tile lands at c[r * ldc + n] and the rest of each row is untouched.
void test_wide_ldc(void**) {
    if (!g_runs) skip();
    amxblas::test::Rng rng(40);
    for (int ldc : {kG.nr + 8, kG.nr + 1}) {
        Panels p(3);
        p.fill([&](int, int) { return random_byte(rng); }, [&](int, int) { return random_byte(rng); });
        check(p, ldc, "wide ldc");
    }
}

// The tables: the avx512 backend's INT8 product is this kernel where the CPU has VNNI (and the
// reference one where not); the reference backend's is reference_product_s8.
void test_table_entry(void**) {
    if (!g_runs) skip();
    if (g_kernel == reference_product_s8) {
        const MicroKernels mk = microkernels_for(Backend::reference);
        assert_true(mk.product_s8 == reference_product_s8);
        assert_true(mk.int8_geometry == kAmxInt8Geometry);
        return;
    }
    if (!backend_built(Backend::avx512) || !backend_runnable_on_cpu(Backend::avx512)) skip();
    const MicroKernels mk = microkernels_for(Backend::avx512);
    assert_true(mk.product_s8 == g_kernel);
    assert_true(mk.int8_geometry == kAmxInt8Geometry);
}

// AMXBLAS_TEST_INT8_KERNEL: the kernel under test and whether it runs here. Returns false on
// a name this file does not know.
bool select_kernel() {
    if (const char* e = std::getenv("AMXBLAS_TEST_INT8_KERNEL")) g_name = e;
    if (std::strcmp(g_name, "reference") == 0) {
        g_kernel = reference_product_s8;
        g_runs = true;
        return true;
    }
    if (std::strcmp(g_name, "avx512_vnni") == 0) {
#if AMXBLAS_BUILT_AVX512_VNNI
        g_kernel = avx512_vnni_product_s8;
        g_runs = cpu_has_avx512_vnni();
#endif
        std::printf("# avx512_vnni: built=%d cpu_has_avx512_vnni=%d\n", AMXBLAS_BUILT_AVX512_VNNI, int(cpu_has_avx512_vnni()));
        return true;
    }
    return false;
}

}  // namespace

int main() {
    if (!select_kernel()) {
        std::fprintf(stderr, "AMXBLAS_TEST_INT8_KERNEL=%s: not reference or avx512_vnni\n", g_name);
        return 2;
    }
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_random_panels),
        cmocka_unit_test(test_extreme_panels),
        cmocka_unit_test(test_deep_panel),
        cmocka_unit_test(test_wide_ldc),
        cmocka_unit_test(test_table_entry),
    };
    const int failed = cmocka_run_group_tests_name("kernels_int8_microkernel_test", tests, nullptr, nullptr);
    if (failed == 0 && !g_runs) {
        std::printf("# %s cannot run here (not built, or no AVX512_VNNI): skipped\n", g_name);
        return 77;
    }
    return failed;
}

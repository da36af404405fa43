// The AMX-INT8 micro-kernel (kernels/isa/amx/microkernel_amx_int8.cc) run under the harness,
// through the amx backend's table: its INT32 tile equals the reference kernel's
// (reference_product_s8) bit for bit, and its tile traffic is exactly what the design implies:
//   per call: 4 TILEZERO, 4 TILESTORED; per K step of 64: 4 TILELOADD, 4 TDPBSSD;
//   no other dot product (TDPBF16PS, TDPBSUD, TDPBUSD, TDPBUUD), no TILELOADDT1;
//   thread_begin(): one STTILECFG, and one LDTILECFG only on this thread's first call.
#include "kernels/isa/backend.h"
#include "kernels/runtime/cpu_features.h"
#include "amxemu/amxemu.h"
#include "tests/amxemu/test_util.h"
#include "tests/common/rng.h"

#include <cstdio>
#include <vector>

namespace kn = amxblas::kernels;

namespace {

constexpr kn::TileGeometry g = kn::kAmxInt8Geometry;
constexpr int kBlock = g.mr * g.kstep;  // bytes of one packed A (or B) block
static_assert(kBlock == g.kstep * g.nr, "A and B blocks of the INT8 geometry are both 2 KiB");
constexpr int kLdc = g.nr + 5;           // a C row stride wider than the tile
constexpr int32_t kSentinel = 0x5a5a5a5a;  // C outside the tile: never written

amxt_rng g_rng = amxt_rng_seeded(2424);

// Random signed bytes, -128 and 127 one time in four (half each), elsewhere uniform.
std::vector<int8_t> random_panel(int ksteps) {
    std::vector<int8_t> v(std::size_t(ksteps) * kBlock);
    for (auto& x : v) {
        const uint64_t s = amxt_rng_next(&g_rng);
        x = (s >> 62) == 0 ? ((s >> 61) & 1 ? int8_t(127) : int8_t(-128)) : int8_t(uint8_t(s >> 40));
    }
    return v;
}

struct Traffic {
    uint64_t loads, dots, zeros, stores;
};

// Runs the table's product_s8 on (a, b) into a kLdc-wide C; checks the instruction counts
// of this one call, and that C outside the 32 x 32 tile is untouched. Returns the tile.
std::vector<int32_t> run_amx(const kn::MicroKernels& k, int ksteps, const int8_t* a, const int8_t* b) {
    std::vector<int32_t> c(std::size_t(g.mr) * kLdc, kSentinel);
    amxemu_reset_counters();
    k.product_s8(ksteps, a, b, c.data(), kLdc);
    amxemu_counts n;
    amxemu_counters(&n);
    const Traffic want{4u * uint64_t(ksteps), 4u * uint64_t(ksteps), 4, 4};
    if (n.tileloadd != want.loads || n.tdpbssd != want.dots || n.tilezero != want.zeros ||
        n.tilestored != want.stores)
        fail_msg("ksteps %d: tileloadd=%llu tdpbssd=%llu tilezero=%llu tilestored=%llu, want %llu %llu 4 4", ksteps,
                 (unsigned long long)n.tileloadd, (unsigned long long)n.tdpbssd, (unsigned long long)n.tilezero,
                 (unsigned long long)n.tilestored, (unsigned long long)want.loads, (unsigned long long)want.dots);
    assert_int_equal(n.tdpbsud + n.tdpbusd + n.tdpbuud + n.tdpbf16ps + n.tileloaddt1, 0);
    assert_int_equal(n.ldtilecfg + n.sttilecfg + n.tilerelease, 0);  // configuration is thread_begin's
    for (int r = 0; r < g.mr; ++r)
        for (int col = g.nr; col < kLdc; ++col) assert_int_equal(c[std::size_t(r) * kLdc + col], kSentinel);
    return c;
}

void expect_equal_to_reference(const kn::MicroKernels& k, int ksteps, const std::vector<int8_t>& a,
                               const std::vector<int8_t>& b) {
    const std::vector<int32_t> amx = run_amx(k, ksteps, a.data(), b.data());
    std::vector<int32_t> ref(amx.size(), kSentinel);
    kn::reference_product_s8(ksteps, a.data(), b.data(), ref.data(), kLdc);
    for (int r = 0; r < g.mr; ++r)
        for (int col = 0; col < g.nr; ++col) {
            const std::size_t i = std::size_t(r) * kLdc + col;
            if (amx[i] != ref[i])
                fail_msg("ksteps %d C(%d, %d): amx %d, reference %d", ksteps, r, col, amx[i], ref[i]);
        }
}

kn::MicroKernels amx_table() {
    const kn::MicroKernels k = kn::microkernels_for(kn::Backend::amx);
    // The AMX kernel itself, not the reference fallback microkernels_for() puts in its place.
    assert_true(k.product_s8 != nullptr && k.product_s8 != &kn::reference_product_s8);
    assert_true(k.int8_geometry == g);
    return k;
}

// thread_begin() configures the tiles the first time on this thread (the harness gives each
// new thread the INIT state; CMocka runs the tests on the main thread, after the release in
// main()), then only reads the configuration back.
void thread_begin_configures_once(void** /*state*/) {
    const kn::MicroKernels k = amx_table();
    for (int call = 0; call < 3; ++call) {
        amxemu_reset_counters();
        k.thread_begin();
        amxemu_counts n;
        amxemu_counters(&n);
        assert_int_equal(n.sttilecfg, 1);
        assert_int_equal(n.ldtilecfg, call == 0 ? 1 : 0);
        k.thread_end();
    }
}

void ksteps_1_to_8_equal_reference(void** /*state*/) {
    const kn::MicroKernels k = amx_table();
    k.thread_begin();
    for (int ksteps = 1; ksteps <= 8; ++ksteps)
        for (int rep = 0; rep < 2; ++rep) {
            const std::vector<int8_t> a = random_panel(ksteps), b = random_panel(ksteps);
            expect_equal_to_reference(k, ksteps, a, b);
        }
    k.thread_end();
}

// The deepest panel the contract allows (kInt8MaxPanelDepth K values): random bytes, then the
// extremes everywhere, whose sums are the largest in magnitude: (-128)(-128) * 2^16 = 2^30,
// and (-128)(127) * 2^16.
void deepest_panel_equal_reference(void** /*state*/) {
    const kn::MicroKernels k = amx_table();
    k.thread_begin();
    const int ksteps = kn::kInt8MaxPanelDepth / g.kstep;
    const std::vector<int8_t> a = random_panel(ksteps), b = random_panel(ksteps);
    expect_equal_to_reference(k, ksteps, a, b);
    const std::vector<int8_t> lo(std::size_t(ksteps) * kBlock, int8_t(-128)), hi(lo.size(), int8_t(127));
    const std::vector<int32_t> sq = run_amx(k, ksteps, lo.data(), lo.data());
    const std::vector<int32_t> mixed = run_amx(k, ksteps, lo.data(), hi.data());
    for (int r = 0; r < g.mr; ++r)
        for (int col = 0; col < g.nr; ++col) {
            assert_int_equal(sq[std::size_t(r) * kLdc + col], 1 << 30);
            assert_int_equal(mixed[std::size_t(r) * kLdc + col], -128 * 127 * kn::kInt8MaxPanelDepth);
        }
    k.thread_end();
}

// Each output depends on its own row of A and column of B only: one nonzero per operand puts
// a single product at a known place, which a swapped tile or quadrant would move.
void single_products_land_in_place(void** /*state*/) {
    const kn::MicroKernels k = amx_table();
    k.thread_begin();
    const int ksteps = 2;
    const int cases[][3] = {{0, 0, 0}, {5, 77, 3}, {17, 64 + 63, 20}, {31, 100, 31}, {16, 1, 16}};
    for (const auto& cs : cases) {
        const int r = cs[0], kk = cs[1], col = cs[2];
        std::vector<int8_t> a(std::size_t(ksteps) * kBlock, 0), b(a.size(), 0);
        const int s = kk / g.kstep, kl = kk % g.kstep;  // K step and K within it
        a[std::size_t(s) * kBlock + std::size_t(r) * g.kstep + kl] = -3;
        b[std::size_t(s) * kBlock + std::size_t(col / g.nr_vnni) * (g.kstep * g.nr_vnni) +
          std::size_t(kl / 4) * (4 * g.nr_vnni) + std::size_t(col % g.nr_vnni) * 4 + kl % 4] = 7;
        const std::vector<int32_t> c = run_amx(k, ksteps, a.data(), b.data());
        for (int i = 0; i < g.mr; ++i)
            for (int j = 0; j < g.nr; ++j)
                assert_int_equal(c[std::size_t(i) * kLdc + j], (i == r && j == col) ? -3 * 7 : 0);
    }
    k.thread_end();
}

}  // namespace

int main() {
    if (!kn::backend_built(kn::Backend::amx)) {
        std::printf("# the AMX micro-kernels are not built: skipped\n");
        return 77;
    }
    if (kn::backend_runnable_on_cpu(kn::Backend::amx)) {
        std::printf("# this CPU runs AMX natively: nothing traps, the counts do not apply: skipped\n");
        return 77;
    }
    assert_true(kn::amx_emulator_present());
    // No earlier AMX use on this thread should decide what thread_begin() does first.
    __asm__ volatile("tilerelease" ::: "memory");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thread_begin_configures_once),
        cmocka_unit_test(ksteps_1_to_8_equal_reference),
        cmocka_unit_test(deepest_panel_equal_reference),
        cmocka_unit_test(single_products_land_in_place),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// The AMX micro-kernel (kernels/isa/amx/microkernel_amx.cc) run under the harness, through the kernel
// entry points: the tile traffic the design implies, counted exactly, and the results against
// the reference backend, bitwise identical: FP64 because every per-panel sum is exact, FP32
// because the reference micro-kernel and the harness both follow the SDM's TDPBF16PS order.
//
// Expected traffic, with Mt = ceil(M/32), Nt = ceil(N/32), S = ceil(K/32) K steps of 32 and
// P = ceil(S/8) BK panels of 256 (the driver pads every dimension to 32):
//   FP32:        TILELOADD 14 per micro-tile and K step, TDPBF16PS 24; TILEZERO and TILESTORED
//                4 per micro-tile and BK panel.
//   FP64 (Np):   TILELOADD and TDPBF16PS 4 Np per micro-tile and K step; TILEZERO and
//                TILESTORED 4 Np per micro-tile and BK panel.
//   Per call and thread that computes a block: one STTILECFG (reading the loaded configuration back); one
//   LDTILECFG only where the thread had not loaded the kernel's configuration yet; no
//   TILERELEASE (the configuration is kept for the next call).
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/common/variants.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/runtime/cpu_features.h"
#include "amxemu/amxemu.h"
#include "tests/amxemu/test_util.h"
#include "tests/common/rng.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <vector>

namespace kn = amxblas::kernels;

namespace {

struct Shape {
    int m, n, k;
};
const Shape kShapes[] = {{64, 64, 64}, {45, 70, 300}, {33, 31, 513}};

int ceil_div(int a, int b) { return (a + b - 1) / b; }

struct Traffic {
    uint64_t loads, dots, zeros, stores;
};

Traffic expected(const Shape& s, int products_per_step, int loads_per_step, int acc_sets) {
    const uint64_t tiles = uint64_t(ceil_div(s.m, 32)) * uint64_t(ceil_div(s.n, 32));
    const uint64_t steps = uint64_t(ceil_div(s.k, 32));
    const uint64_t panels = uint64_t(ceil_div(int(steps), 8));
    return {tiles * steps * uint64_t(loads_per_step), tiles * steps * uint64_t(products_per_step),
            tiles * panels * 4u * uint64_t(acc_sets), tiles * panels * 4u * uint64_t(acc_sets)};
}

amxt_rng g_rng = {0x9e3779b97f4a7c15ull};
double uniform() {  // [1, 2) with a full 52-bit mantissa, random sign
    const uint64_t s = amxt_rng_next(&g_rng);
    const double v = 1.0 + double(s >> 12) * 0x1p-52;
    return (s >> 11) & 1 ? v : -v;
}

template <typename T>
std::vector<T> matrix(int rows, int cols) {
    std::vector<T> v(size_t(rows) * size_t(cols));
    for (auto& x : v) x = T(uniform());
    // FP64: entries 2^0 .. 2^-23 apart in every row and column, so that all eight slices of
    // the FP64 split are nonzero (full 53-bit values of one binade fill only six) and every
    // retained product runs: the counts below are those of the full schedule.
    if constexpr (sizeof(T) == 8)
        for (size_t q = 0; q < v.size(); ++q) v[q] = std::ldexp(v[q], -int(q % 24));
    return v;
}

template <typename T>
const char* run(const Shape& s, kn::Backend backend, int products, int threads, std::vector<T>* c) {
    const auto a = matrix<T>(s.m, s.k);
    const auto b = matrix<T>(s.k, s.n);
    c->assign(size_t(s.m) * size_t(s.n), T(0));
    kn::GemmArgs<T> g{'N', 'N', s.m, s.n, s.k, T(1), a.data(), s.m, b.data(), s.k, T(0), c->data(), s.m};
    kn::RunOptions opt;
    opt.backend = backend;
    opt.fp64_products = products;
    opt.threads = threads;
    opt.amx_emulator = amxblas::kernels::amx_emulator_present();
    if constexpr (sizeof(T) == 4) {
        return amxblas::kernels::emulate_gemm(g, opt);
    } else {
        return amxblas::kernels::emulate_gemm(g, opt);
    }
}

void check_counts(const char* what, const Shape& s, const Traffic& want, int threads) {
    amxemu_counts c;
    amxemu_counters(&c);
    std::printf("# %s %dx%dx%d: tileloadd=%llu tdpbf16ps=%llu tilezero=%llu tilestored=%llu "
                "ldtilecfg=%llu tilerelease=%llu\n",
                what, s.m, s.n, s.k, (unsigned long long)c.tileloadd, (unsigned long long)c.tdpbf16ps,
                (unsigned long long)c.tilezero, (unsigned long long)c.tilestored,
                (unsigned long long)c.ldtilecfg, (unsigned long long)c.tilerelease);
    assert_int_equal(c.tileloadd, want.loads);
    assert_int_equal(c.tdpbf16ps, want.dots);
    assert_int_equal(c.tilezero, want.zeros);
    assert_int_equal(c.tilestored, want.stores);
    assert_int_equal(c.tileloaddt1, 0);
    // Each thread configures its tiles once per parallel region of blocks: one per K chunk of
    // 256 (kernels/bf16/chunking.h; these shapes are one super-block).
    const uint64_t regions = uint64_t(s.k > 256 ? (s.k + 255) / 256 : 1);
    assert_true(c.sttilecfg >= 1 && c.sttilecfg <= uint64_t(threads) * regions);
    assert_true(c.ldtilecfg <= c.sttilecfg);
    assert_int_equal(c.tilerelease, 0);
}

// Repeated calls: each thread that takes part loads the configuration at most once over all
// of them (the thread pool may bring in a worker late, which then loads it on its first call),
// and reads it back once per call it takes part in. A TILERELEASE in between (another user of
// the tiles) makes the next call load it again.
void tile_config_loaded_once_per_thread(void** /*state*/) {
    const Shape s{64, 600, 64};  // 3 output blocks: work for 2 threads
    constexpr int kCalls = 5;
    for (int threads : {1, 2}) {
        std::vector<float> c;
        amxemu_reset_counters();
        for (int q = 0; q < kCalls; ++q) assert_null(run<float>(s, kn::Backend::amx, 21, threads, &c));
        amxemu_counts n;
        amxemu_counters(&n);
        assert_true(n.ldtilecfg <= uint64_t(threads));
        assert_true(n.sttilecfg >= uint64_t(kCalls) && n.sttilecfg <= uint64_t(kCalls * threads));
        assert_int_equal(n.tilerelease, 0);
    }
    __asm__ volatile("tilerelease" ::: "memory");  // this thread's tiles back to their initial state
    amxemu_reset_counters();
    std::vector<float> c;
    assert_null(run<float>(s, kn::Backend::amx, 21, 1, &c));
    amxemu_counts n;
    amxemu_counters(&n);
    assert_int_equal(n.ldtilecfg, 1);
}

void sgemm_tile_traffic(void** /*state*/) {
    for (const Shape& s : kShapes) {
        std::vector<float> c;
        amxemu_reset_counters();
        assert_null(run<float>(s, kn::Backend::amx, 21, 1, &c));
        check_counts("sgemm", s, expected(s, 24, 14, 1), 1);
    }
}

void dgemm_tile_traffic(void** /*state*/) {
    const Shape s = kShapes[1];
    for (int np : kn::kFp64Products) {
        std::vector<double> c;
        amxemu_reset_counters();
        assert_null(run<double>(s, kn::Backend::amx, np, 1, &c));
        char what[32];
        std::snprintf(what, sizeof(what), "dgemm Np=%d", np);
        check_counts(what, s, expected(s, 4 * np, 4 * np, np), 1);
    }
}

void dgemm_bitwise_equal_to_reference(void** /*state*/) {
    for (const Shape& s : kShapes)
        for (int np : {6, 21})
            for (int threads : {1, 2}) {
                std::vector<double> ref, amx;
                const amxt_rng seed = g_rng;
                assert_null(run<double>(s, kn::Backend::reference, np, threads, &ref));
                g_rng = seed;
                assert_null(run<double>(s, kn::Backend::amx, np, threads, &amx));
                assert_memory_equal(ref.data(), amx.data(), ref.size() * sizeof(double));
            }
}

void sgemm_bitwise_equal_to_reference(void** /*state*/) {
    for (const Shape& s : kShapes)
        for (int threads : {1, 2}) {
            std::vector<float> ref, amx;
            const amxt_rng seed = g_rng;
            assert_null(run<float>(s, kn::Backend::reference, 21, threads, &ref));
            g_rng = seed;
            assert_null(run<float>(s, kn::Backend::amx, 21, threads, &amx));
            for (size_t i = 0; i < ref.size(); ++i)
                if (amxemu_test::bits(ref[i]) != amxemu_test::bits(amx[i]))
                    fail_msg("sgemm %dx%dx%d threads=%d [%zu]: reference %.9g, amx %.9g", s.m, s.n,
                             s.k, threads, i, ref[i], amx[i]);
        }
}

}  // namespace

int main() {
    if (!kn::backend_built(kn::Backend::amx)) {
        std::printf("# the AMX micro-kernel is not built: skipped\n");
        return 77;
    }
    if (kn::backend_runnable_on_cpu(kn::Backend::amx)) {
        std::printf("# this CPU runs AMX natively: nothing traps, the counts do not apply: skipped\n");
        return 77;
    }
    assert_true(amxblas::kernels::amx_emulator_present());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sgemm_tile_traffic),
        cmocka_unit_test(dgemm_tile_traffic),
        cmocka_unit_test(dgemm_bitwise_equal_to_reference),
        cmocka_unit_test(sgemm_bitwise_equal_to_reference),
        cmocka_unit_test(tile_config_loaded_once_per_thread),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// The cost model (policy/cost_model.h) and AMXBLAS_SHAPES=auto in decide(): the model's counts
// against the kernels' blocking, monotonicity, issue 26's target shapes on each backend, and
// that square and any never consult it.
#include <cmath>
#include <complex>  // before cmocka.h, whose fail() macro breaks <complex>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include "kernels/common/int8_chunk_plan.h"
#include "kernels/common/engine_table.h"
#include "kernels/isa/microkernel.h"
#include "policy/cost_model.h"
#include "policy/reasons.h"
#include "policy/route.h"

using namespace amxblas;
using kernels::Backend;

// The model restates the kernels' geometry (the policy may include only kernels/common/): a
// change there must change it too. This test may include the kernels' header.
static_assert(kCostTile == kernels::kAmxGeometry.mr && kCostTile == kernels::kAmxGeometry.nr &&
                  kCostTile == kernels::kAmxGeometry.kstep,
              "policy/cost_model.h kCostTile: the micro-kernel geometry changed");
static_assert(kCostBlock == kernels::kBlockM && kCostBlock == kernels::kBlockN && kCostBlock == kernels::kBlockK,
              "policy/cost_model.h kCostBlock: the driver's blocks changed");
static_assert(kCostInt8Kstep == kernels::kAmxInt8Geometry.kstep && kCostTile == kernels::kAmxInt8Geometry.mr &&
                  kCostTile == kernels::kAmxInt8Geometry.nr,
              "policy/cost_model.h kCostInt8Kstep: the INT8 micro-kernel geometry changed");
static_assert(kCostInt8AutoModuli >= kernels::kInt8MinModuli && kCostInt8AutoModuli <= kernels::kInt8MaxModuli,
              "policy/cost_model.h kCostInt8AutoModuli: a count the INT8 engine has");

namespace {

GemmCall call(Precision p, std::int64_t m, std::int64_t n, std::int64_t k, char ta = 'N', char tb = 'N',
              bool complex = false) {
    GemmCall c{};
    c.precision = p;
    c.complex = complex;
    c.transa = ta;
    c.transb = tb;
    c.m = m;
    c.n = n;
    c.k = k;
    c.lda = (ta == 'N') ? m : k;
    c.ldb = (tb == 'N') ? k : n;
    c.ldc = m;
    return c;
}

// Default settings (AMXBLAS_SHAPES=auto) with FP64 on and the backend asked for.
Settings auto_on(BackendChoice b, int fp64_products = 21) {
    Settings s;
    s.fp64_products = fp64_products;
    s.backend = b;
    s.num_threads = 2;
    return s;
}

Hardware machine(bool amx, bool avx512) {
    Hardware h;
    h.set_runs(Backend::amx, amx);
    h.set_runs(Backend::avx512, avx512);
    h.set_runs(Backend::reference, true);
    h.cores = 2;
    return h;
}

CostPrediction predict(Backend b, Precision p, std::int64_t m, std::int64_t n, std::int64_t k, int products = 21,
                       bool complex = false, int threads = 2) {
    CostInput in;
    in.precision = p;
    in.complex = complex;
    in.m = m;
    in.n = n;
    in.k = k;
    in.products = p == Precision::fp32 ? 6 : products;
    in.slices = p == Precision::fp32 ? 3 : (products == 6 ? 3 : products == 10 ? 4 : products == 15 ? 5 : 6);
    in.backend = b;
    in.threads = threads;
    return predict_cost(in);
}

// bench/bench_amx.cc tile_counts(), checked there against the harness: N = 512.
void amx_counts_match_the_harness_formula(void**) {
    const CostPrediction f = predict(Backend::amx, Precision::fp32, 512, 512, 512);
    assert_true(f.tdpbf16ps == 24.0 * 256 * 16);
    assert_true(f.tileloadd == 14.0 * 256 * 16);
    assert_true(f.tilestored == 4.0 * 256 * 2);
    const CostPrediction d = predict(Backend::amx, Precision::fp64, 512, 512, 512, 21);
    assert_true(d.tdpbf16ps == 4.0 * 21 * 256 * 16);
    assert_true(d.tileloadd == d.tdpbf16ps);
    assert_true(d.tilestored == 4.0 * 21 * 256 * 2);
    // Partial tiles count whole: 33 rows are 2 tiles, as the packer pads them.
    assert_true(predict(Backend::amx, Precision::fp32, 33, 32, 32).tdpbf16ps == 24.0 * 2);
    // The driver's blocks: N = 256 on 2 threads is cut to 64 x 64 (16 blocks), N = 1024 keeps 16.
    assert_int_equal(predict(Backend::amx, Precision::fp32, 256, 256, 256).blocks, 16);
    assert_int_equal(predict(Backend::amx, Precision::fp32, 1024, 1024, 256).blocks, 16);
    assert_int_equal(predict(Backend::amx, Precision::fp32, 256, 256, 256, 6, false, 1).blocks, 1);
}

// Every phase, and the whole call, grows with M, N and K; more products cost more.
void monotone(void**) {
    for (Backend b : kernels::kAllBackends)
        for (Precision p : {Precision::fp32, Precision::fp64}) {
            const std::int64_t sizes[] = {64, 128, 256, 512, 1024, 4096};
            for (int which = 0; which < 3; ++which) {
                double last = 0, last_blas = 0;
                for (std::int64_t s : sizes) {
                    std::int64_t d[3] = {512, 512, 512};
                    d[which] = s;
                    const CostPrediction c = predict(b, p, d[0], d[1], d[2]);
                    assert_true(c.routed_s > last);
                    assert_true(c.blas_s > last_blas);
                    assert_true(c.split_pack_s > 0 && c.products_s > 0 && c.reconstruct_s > 0);
                    last = c.routed_s;
                    last_blas = c.blas_s;
                }
            }
        }
    double last = 0;
    for (int products : {6, 10, 15, 21}) {
        const double t = predict(Backend::amx, Precision::fp64, 2048, 2048, 2048, products).routed_s;
        assert_true(t > last);
        last = t;
    }
    // The real BLAS gains from threads as much as the routed call's phases do.
    assert_true(predict(Backend::amx, Precision::fp64, 4096, 4096, 4096, 21, false, 4).blas_s <
                predict(Backend::amx, Precision::fp64, 4096, 4096, 4096, 21, false, 2).blas_s);
    // FP64 auto costs more than FP64-21 (its certificate's product and its facts pass).
    assert_true(predict(Backend::amx, Precision::fp64, 2048, 2048, 2048, kernels::kFp64Auto).routed_s >
                predict(Backend::amx, Precision::fp64, 2048, 2048, 2048, 21).routed_s);
    // A complex call is 4 real products' work.
    const CostPrediction r = predict(Backend::amx, Precision::fp64, 1024, 1024, 1024);
    const CostPrediction z = predict(Backend::amx, Precision::fp64, 1024, 1024, 1024, 21, true);
    assert_true(z.product_steps == 4 * r.product_steps);
    assert_true(z.blas_s == 4 * r.blas_s);
}

CostPrediction predict_int8(Backend b, std::int64_t m, std::int64_t n, std::int64_t k, int moduli,
                            bool complex = false) {
    CostInput in;
    in.precision = Precision::fp64;
    in.complex = complex;
    in.m = m;
    in.n = n;
    in.k = k;
    in.products = moduli;
    in.engine = kernels::Fp64Engine::int8;
    in.backend = b;
    in.threads = 2;
    return predict_cost(in);
}

// The INT8 engine: `moduli` products of count * M N K / (16 16 64) TDPBSSD, plus one product
// of magnitudes for auto (which takes kCostInt8AutoModuli on ordinary inputs).
void int8_engine(void**) {
    const CostPrediction f = predict_int8(Backend::amx, 512, 512, 512, 14);
    assert_true(f.tdpbssd == 14.0 * 512 * 512 * 512 / (16 * 16 * 64));
    assert_true(f.tdpbf16ps == 0);
    assert_true(f.tileloadd == f.tdpbssd);
    const CostPrediction a = predict_int8(Backend::amx, 512, 512, 512, kernels::kFp64Auto);
    assert_true(a.tdpbssd == (kCostInt8AutoModuli + 1.0) * 512 * 512 * 512 / (16 * 16 * 64));
    assert_true(a.routed_s > predict_int8(Backend::amx, 512, 512, 512, kCostInt8AutoModuli).routed_s);
    // More moduli cost more; every phase is there; a complex call is 4 real products' work.
    for (Backend b : kernels::kAllBackends) {
        double last = 0;
        for (int moduli = kernels::kInt8MinModuli; moduli <= kernels::kInt8MaxModuli; ++moduli) {
            const CostPrediction c = predict_int8(b, 2048, 2048, 2048, moduli);
            assert_true(c.routed_s > last);
            assert_true(c.split_pack_s > 0 && c.products_s > 0 && c.reconstruct_s > 0);
            last = c.routed_s;
        }
        const CostPrediction r = predict_int8(b, 1024, 1024, 1024, 16), z = predict_int8(b, 1024, 1024, 1024, 16, true);
        assert_true(z.product_steps == 4 * r.product_steps);
        assert_true(z.blas_s == 4 * r.blas_s);
    }
    // Twice the multiply-adds per tile instruction: 16 moduli's tile work is below BF16's 21 products'.
    assert_true(predict_int8(Backend::amx, 4096, 4096, 4096, 16).products_s <
                predict(Backend::amx, Precision::fp64, 4096, 4096, 4096, 21).products_s);
}

// The INT8 reconstruction: the last K chunk's values (a fold and the CRT per modulus and entry,
// then C's write) at the reconstruction's rate, and the folds of the chunks before it at their
// own, cheaper rate where the row has one. The plan's chunks (int8_chunk_plan.h) decide how many.
void int8_folds(void**) {
    const CostConstants& amx = cost_constants(Backend::amx);
    assert_true(amx.fold_values_s_int8 > amx.recon_values_s_int8);
    for (std::int64_t k : {2048, 16384}) {
        const CostPrediction p = predict_int8(Backend::amx, 1024, 1024, k, 16);
        const kernels::Int8ChunkPlan plan = kernels::plan_int8_chunks(1024, 1024, int(k), 16, false, 2);
        const double chunks = std::ceil(double(k) / plan.kc), layer = 16.0 * 1024 * 1024;
        assert_true(p.recon_values == layer + 1024.0 * 1024);
        assert_true(p.fold_values == layer * (chunks - 1));
        const double per_thread = std::ceil(p.blocks / 2.0) / p.blocks;
        const double expect = (p.recon_values / amx.recon_values_s_int8 + p.fold_values / amx.fold_values_s_int8) * per_thread;
        assert_true(std::fabs(p.reconstruct_s - expect) <= 1e-12 * expect);
        if (k == 2048) assert_true(p.fold_values == 0);
        if (k == 16384) {  // a fold costs less than a value of the last chunk
            assert_true(chunks > 1);
            assert_true(p.reconstruct_s < (p.recon_values + p.fold_values) / amx.recon_values_s_int8 * per_thread);
        }
    }
}

// decide() asks the model about the engine that runs: INT8's route and auto under the int8
// engine; auto under the auto engine keeps BF16 auto's prediction, bit for bit. With the INT8
// rates measured (policy/cost_model.cc) a 2048^3 call gains on AMX and an HPL update (K = 256)
// does not: its reconstruction, per entry and modulus, does not shrink with K.
void int8_engine_in_decide(void**) {
    const GemmCall c = call(Precision::fp64, 2048, 2048, 2048);
    Settings s = auto_on(BackendChoice::amx, 16);
    s.fp64_engine = kernels::Fp64Engine::int8;
    const Decision d = decide(c, s, machine(true, true));
    assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::amx_fp64_int8));
    assert_true(d.predicted_speedup == predict_cost(cost_input(c, d.route, s, Backend::amx, 2)).speedup);
    assert_true(d.predicted_speedup == predict_int8(Backend::amx, 2048, 2048, 2048, 16).speedup);
    s.fp64_products = kernels::kFp64Auto;
    assert_true(decide(c, s, machine(true, true)).predicted_speedup ==
                predict_int8(Backend::amx, 2048, 2048, 2048, kernels::kFp64Auto).speedup);
    Settings bf16 = auto_on(BackendChoice::amx, kernels::kFp64Auto);
    bf16.fp64_engine = kernels::Fp64Engine::bf16;
    Settings automatic = bf16;
    automatic.fp64_engine = kernels::Fp64Engine::automatic;
    assert_true(decide(c, automatic, machine(true, true)).predicted_speedup ==
                decide(c, bf16, machine(true, true)).predicted_speedup);
    assert_true(decide(c, bf16, machine(true, true)).predicted_speedup ==
                predict(Backend::amx, Precision::fp64, 2048, 2048, 2048, kernels::kFp64Auto).speedup);
    s.fp64_products = 16;
    assert_string_equal(decide(call(Precision::fp64, 4096, 4096, 256), s, machine(true, true)).reason,
                        reason::cost_no_gain);
    // The vector backends gain nothing from INT8 either.
    for (BackendChoice b : {BackendChoice::avx512, BackendChoice::reference}) {
        s.backend = b;
        assert_string_equal(decide(c, s, machine(false, true)).reason, reason::cost_no_gain);
    }
}

struct Target {
    Precision p;
    bool complex;
    std::int64_t m, n, k;
    char ta, tb;
};
// Issue 26: an HPL-like update and a DFT-like overlap, in the SGEMM, DGEMM, CGEMM and ZGEMM forms.
const Target kTargets[] = {
    {Precision::fp64, false, 4096, 4096, 256, 'N', 'N'}, {Precision::fp64, false, 1024, 1024, 65536, 'T', 'N'},
    {Precision::fp32, false, 4096, 4096, 256, 'N', 'N'}, {Precision::fp32, false, 1024, 1024, 65536, 'T', 'N'},
    {Precision::fp64, true, 4096, 4096, 256, 'N', 'N'},  {Precision::fp64, true, 1024, 1024, 65536, 'T', 'N'},
    {Precision::fp32, true, 4096, 4096, 256, 'N', 'N'},  {Precision::fp32, true, 1024, 1024, 65536, 'T', 'N'},
};

void targets_routed_on_amx(void**) {
    for (const Target& t : kTargets) {
        const GemmCall c = call(t.p, t.m, t.n, t.k, t.ta, t.tb, t.complex);
        const Decision d = decide(c, auto_on(BackendChoice::automatic), machine(true, true));
        assert_null(d.reason);
        assert_int_equal(static_cast<int>(d.backend), static_cast<int>(Backend::amx));
        assert_true(d.predicted_speedup >= kCostMargin);
        // Without AMX the model still runs for amx (what auto asks for), then the machine forwards.
        const Decision here = decide(c, auto_on(BackendChoice::automatic), machine(false, true));
        assert_string_equal(here.reason, reason::backend_no_amx);
        assert_true(here.predicted_speedup >= kCostMargin);
    }
}

void targets_forwarded_on_avx512_and_reference(void**) {
    for (const Target& t : kTargets)
        for (BackendChoice b : {BackendChoice::avx512, BackendChoice::reference}) {
            const Decision d = decide(call(t.p, t.m, t.n, t.k, t.ta, t.tb, t.complex), auto_on(b), machine(false, true));
            assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::forward));
            assert_string_equal(d.reason, reason::cost_no_gain);
            assert_true(d.predicted_speedup > 0 && d.predicted_speedup < kCostMargin);
        }
    // The model runs before the machine's check: avx512 asked for on a CPU without it.
    const Decision d = decide(call(Precision::fp64, 4096, 4096, 256), auto_on(BackendChoice::avx512), machine(false, false));
    assert_string_equal(d.reason, reason::cost_no_gain);
}

// Issue 26: default settings (auto) on the avx512 backend forward a 2048 x 2048 x 256 DGEMM with
// a cost: reason and the prediction, for every FP64 setting that routes DGEMM.
void default_settings_forward_hpl_update_on_avx512(void**) {
    for (int products : {6, 21, kernels::kFp64Auto}) {
        Settings s;  // the defaults, FP64 turned on
        assert_true(s.shapes == ShapeRule::automatic);
        s.fp64_products = products;
        s.backend = BackendChoice::avx512;
        const Decision d = decide(call(Precision::fp64, 2048, 2048, 256), s, machine(false, true));
        assert_string_equal(d.reason, reason::cost_no_gain);
        assert_true(d.predicted_speedup > 0 && d.predicted_speedup < 1);
    }
    // Small calls never pay, even on AMX (issue 26's 4 x 24 x 4 under AMXBLAS_MIN_N=1).
    Settings s = auto_on(BackendChoice::amx);
    s.min_n = 1;
    const Decision d = decide(call(Precision::fp64, 4, 24, 4), s, machine(true, true));
    assert_string_equal(d.reason, reason::cost_no_gain);
}

// square and any keep their meaning: the model is not consulted, nothing is predicted.
void forced_settings_unaffected(void**) {
    for (ShapeRule rule : {ShapeRule::square, ShapeRule::any})
        for (BackendChoice b : {BackendChoice::avx512, BackendChoice::reference}) {
            Settings s = auto_on(b);
            s.shapes = rule;
            s.min_n = 1;
            const Decision d = decide(call(Precision::fp64, 512, 512, 512), s, machine(false, true));
            assert_null(d.reason);
            assert_true(d.predicted_speedup == 0);
            if (rule == ShapeRule::any) {
                const Decision small = decide(call(Precision::fp32, 4, 24, 4), s, machine(false, true));
                assert_null(small.reason);
                assert_true(small.predicted_speedup == 0);
            }
        }
    // Checks before the model keep their reasons under auto.
    Settings s = auto_on(BackendChoice::amx);
    assert_string_equal(decide(call(Precision::fp64, 100, 4096, 4096), s, machine(true, true)).reason,
                        reason::size_below_min_n);
    s.fp64_products = 0;
    assert_string_equal(decide(call(Precision::fp64, 4096, 4096, 4096), s, machine(true, true)).reason,
                        reason::fp64_disabled);
}

// The split + pack the model counts for 4096^3 FP64-21, 2 threads: with the driver's budget
// op(A) and op(B) are split on 2 x 2 super-blocks, twice each, and the guessed scales settled on
// one chunk of each; with a budget that holds the whole call (chunk_budget_bytes, the
// benchmark's whole-operand baseline) once each: 8 bytes read and 6 BF16 slices written per
// value of op(A) and op(B).
void chunk_budget_models_whole_operands(void**) {
    CostInput in;
    in.precision = Precision::fp64;
    in.m = in.n = in.k = 4096;
    in.products = 21;
    in.slices = 6;
    in.threads = 2;
    const double values = 2.0 * 4096 * 4096, once = values * (8 + 6 * 2);
    const CostPrediction chunked = predict_cost(in);
    in.chunk_budget_bytes = std::size_t(1) << 40;
    const CostPrediction whole = predict_cost(in);
    assert_true(whole.split_pack_bytes == once);
    const double first_chunks = 2.0 * 2048 * 256 * (8 + 6 * 2);  // settle_scales, fp64_gemm.cc
    assert_true(chunked.split_pack_bytes == 2 * once + first_chunks);
    assert_true(chunked.products_s == whole.products_s);
}

// The vector backends' products: step_s per 32 x 32 x 32 step of each product, plus tile_s per
// product and 32 x 32 output tile (the part a short K does not amortise). One block, so one
// thread's share is the whole call's.
void vector_products_count_steps_and_tiles(void**) {
    CostConstants c = cost_constants(Backend::avx512);
    c.step_s_fp64 = 1e-6, c.tile_s_fp64 = 1e-3;
    CostInput in;
    in.precision = Precision::fp64;
    in.backend = Backend::avx512;
    in.m = in.n = 64;
    in.k = 96;  // 3 steps per tile
    in.products = 6;
    in.slices = 3;
    in.threads = 1;
    const CostPrediction p = predict_cost(in, c);
    const double tiles = 4, steps = 3;
    assert_true(p.product_steps == 6 * tiles * steps);
    assert_true(p.products_s == 6 * tiles * steps * 1e-6 + 6 * tiles * 1e-3);
    c.tile_s_fp64 = 0;
    assert_true(predict_cost(in, c).products_s == 6 * tiles * steps * 1e-6);
    // Only the vector backends count tiles; AMX counts tile instructions.
    assert_true(cost_constants(Backend::amx).tile_s_fp32 == 0 && cost_constants(Backend::amx).tile_s_fp64 == 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(amx_counts_match_the_harness_formula),
        cmocka_unit_test(monotone),
        cmocka_unit_test(chunk_budget_models_whole_operands),
        cmocka_unit_test(vector_products_count_steps_and_tiles),
        cmocka_unit_test(int8_engine),
        cmocka_unit_test(int8_folds),
        cmocka_unit_test(int8_engine_in_decide),
        cmocka_unit_test(targets_routed_on_amx),
        cmocka_unit_test(targets_forwarded_on_avx512_and_reference),
        cmocka_unit_test(default_settings_forward_hpl_update_on_avx512),
        cmocka_unit_test(forced_settings_unaffected),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

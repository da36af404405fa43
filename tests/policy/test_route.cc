// decide() and gemm_invalid_parameter(): every reason, the order of the checks, the shape and
// size rules at their boundaries, each backend with and without the hardware, threads.
#include <complex>  // before cmocka.h, whose fail() macro breaks <complex>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include <cstring>

#include "kernels/common/fp_environment.h"
#include "policy/reasons.h"
#include "policy/route.h"

using namespace amxblas;

namespace {

// A square call that every default rule routes, on a machine with AMX.
GemmCall routable(Precision p = Precision::fp64, int n = 512) {
    GemmCall c{};
    c.precision = p;
    c.transa = 'N';
    c.transb = 'N';
    c.m = c.n = c.k = n;
    c.lda = c.ldb = c.ldc = n;
    c.alpha_is_zero = false;
    return c;
}

// The rules before the cost model: AMXBLAS_SHAPES=square (auto's cost model has its own tests,
// test_cost_model.cc).
Settings square() {
    Settings s;
    s.shapes = ShapeRule::square;
    return s;
}

Settings fp64_on() {
    Settings s = square();
    s.fp64_products = 21;
    s.num_threads = 8;
    return s;
}

Hardware amx_machine() {
    Hardware h;
    h.set_runs(kernels::Backend::amx, true);
    h.set_runs(kernels::Backend::avx512, true);
    h.cores = 8;
    return h;
}

void assert_reason(const Decision& d, const char* reason) {
    assert_non_null(d.reason);
    assert_string_equal(d.reason, reason);
}

void assert_routed(const Decision& d, Route r) {
    assert_null(d.reason);
    assert_int_equal(static_cast<int>(d.route), static_cast<int>(r));
}

// --- gemm_invalid_parameter: the reference BLAS's INFO numbers. ----------------------------

void invalid_parameter_numbers(void**) {
    assert_int_equal(gemm_invalid_parameter('N', 'N', 4, 5, 6, 4, 6, 4), 0);
    for (char t : {'N', 'n', 'T', 't', 'C', 'c'}) {
        assert_int_equal(gemm_invalid_parameter(t, 'N', 4, 4, 4, 4, 4, 4), 0);
        assert_int_equal(gemm_invalid_parameter('N', t, 4, 4, 4, 4, 4, 4), 0);
    }
    assert_int_equal(gemm_invalid_parameter('X', 'N', 4, 4, 4, 4, 4, 4), 1);
    assert_int_equal(gemm_invalid_parameter('\0', 'N', 4, 4, 4, 4, 4, 4), 1);
    assert_int_equal(gemm_invalid_parameter('N', 'R', 4, 4, 4, 4, 4, 4), 2);
    assert_int_equal(gemm_invalid_parameter('N', 'N', -1, 4, 4, 4, 4, 4), 3);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 4, -1, 4, 4, 4, 4), 4);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 4, 4, -1, 4, 4, 4), 5);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 4, 4, 4, 3, 4, 4), 8);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 4, 4, 4, 4, 3, 4), 10);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 4, 4, 4, 4, 4, 3), 13);
    // The first failing parameter wins, in the reference order.
    assert_int_equal(gemm_invalid_parameter('X', 'Y', -1, -1, -1, 0, 0, 0), 1);
    assert_int_equal(gemm_invalid_parameter('N', 'Y', -1, -1, -1, 0, 0, 0), 2);
    assert_int_equal(gemm_invalid_parameter('N', 'N', -1, -1, -1, 0, 0, 0), 3);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 2, 3, 4, 1, 1, 1), 8);
}

void invalid_parameter_leading_dimensions(void**) {
    // m = 2, n = 3, k = 5. op(A) is m x k: stored m x k ('N') or k x m ('T').
    assert_int_equal(gemm_invalid_parameter('N', 'N', 2, 3, 5, 2, 5, 2), 0);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 2, 3, 5, 1, 5, 2), 8);
    assert_int_equal(gemm_invalid_parameter('T', 'N', 2, 3, 5, 5, 5, 2), 0);
    assert_int_equal(gemm_invalid_parameter('t', 'N', 2, 3, 5, 4, 5, 2), 8);
    assert_int_equal(gemm_invalid_parameter('c', 'N', 2, 3, 5, 2, 5, 2), 8);
    // op(B) is k x n: stored k x n ('N') or n x k ('T').
    assert_int_equal(gemm_invalid_parameter('N', 'N', 2, 3, 5, 2, 4, 2), 10);
    assert_int_equal(gemm_invalid_parameter('N', 'T', 2, 3, 5, 2, 3, 2), 0);
    assert_int_equal(gemm_invalid_parameter('N', 'C', 2, 3, 5, 2, 2, 2), 10);
    assert_int_equal(gemm_invalid_parameter('N', 'n', 2, 3, 5, 2, 5, 2), 0);
    // LDC >= max(1, m) whatever the transposes; leading dimensions are at least 1.
    assert_int_equal(gemm_invalid_parameter('T', 'T', 2, 3, 5, 5, 3, 1), 13);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 0, 0, 0, 1, 1, 1), 0);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 0, 0, 0, 0, 1, 1), 8);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 0, 0, 0, 1, 0, 1), 10);
    assert_int_equal(gemm_invalid_parameter('N', 'N', 0, 0, 0, 1, 1, 0), 13);
}

// --- decide(): each reason. --------------------------------------------------------------

void routes_by_default(void**) {
    const Decision d = decide(routable(), fp64_on(), amx_machine());
    assert_routed(d, Route::amx_fp64_21);
    assert_int_equal(static_cast<int>(d.backend), static_cast<int>(kernels::Backend::amx));
    assert_int_equal(d.threads, 8);
    assert_null(d.threads_note);
    assert_routed(decide(routable(Precision::fp32), square(), amx_machine()), Route::amx_fp32);
}

void args_invalid(void**) {
    GemmCall c = routable();
    c.lda = c.m - 1;
    const Decision d = decide(c, fp64_on(), amx_machine());
    assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::forward));
    assert_reason(d, reason::args_invalid);
}

// Arguments the reference BLAS rejects but OpenBLAS computes: forwarded, and not called invalid.
void args_nonstandard(void**) {
    GemmCall c = routable();
    c.transa = 'R';
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::args_nonstandard);
    c = routable();
    c.transb = 'r';
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::args_nonstandard);
    c = routable();
    c.m = 0;
    c.ldc = 0;  // reference: LDC >= max(1, M); OpenBLAS: LDC >= M
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::args_nonstandard);
    assert_true(gemm_accepted_by_openblas('N', 'T', 0, 5, 3, 0, 5, 0));
    // What no BLAS accepts stays invalid.
    assert_false(gemm_accepted_by_openblas('X', 'N', 4, 4, 4, 4, 4, 4));
    assert_false(gemm_accepted_by_openblas('N', 'N', 4, 4, -1, 4, 4, 4));
    c = routable();
    c.m = 0;
    c.ldc = -1;
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::args_invalid);
    c = routable();
    c.transa = 'R';
    c.lda = c.m - 1;
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::args_invalid);
}

void size_empty_k_zero_alpha_zero(void**) {
    GemmCall c = routable();
    c.m = 0;
    Decision d = decide(c, fp64_on(), amx_machine());
    assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::forward));
    assert_reason(d, reason::size_empty);
    c = routable();
    c.n = 0;
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::size_empty);

    c = routable();
    c.k = 0;
    d = decide(c, fp64_on(), amx_machine());
    assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::beta_scale));
    assert_reason(d, reason::size_k_zero);

    // ILP64 sizes beyond INT_MAX are forwarded whole, before K = 0 or ALPHA = 0 could make the
    // shim scale C itself; a leading dimension beyond INT_MAX alone is fine.
    for (int which = 0; which < 3; ++which) {
        c = routable();
        c.lda = c.ldb = c.ldc = std::int64_t{1} << 33;
        std::int64_t* dim = which == 0 ? &c.m : which == 1 ? &c.n : &c.k;
        *dim = (std::int64_t{1} << 31) + 7;
        c.alpha_is_zero = true;
        assert_reason(decide(c, fp64_on(), amx_machine()), reason::size_too_large);
    }
    c = routable();
    c.lda = (std::int64_t{1} << 31) + 32;
    assert_routed(decide(c, fp64_on(), amx_machine()), Route::amx_fp64_21);

    c = routable();
    c.alpha_is_zero = true;
    d = decide(c, fp64_on(), amx_machine());
    assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::beta_scale));
    assert_reason(d, reason::alpha_zero);
}

void precision_disabled(void**) {
    Settings s;
    s.fp32 = false;
    assert_reason(decide(routable(Precision::fp32), s, amx_machine()), reason::fp32_disabled);
    // The default: no DGEMM routed. An unsupported product count also disables FP64.
    assert_reason(decide(routable(), square(), amx_machine()), reason::fp64_disabled);
    s = fp64_on();
    s.fp64_products = 7;
    assert_reason(decide(routable(), s, amx_machine()), reason::fp64_disabled);
    for (int p : kernels::kFp64Products) {
        s.fp64_products = p;
        const Decision d = decide(routable(), s, amx_machine());
        assert_routed(d, fp64_route(p));
        assert_int_equal(route_products(d.route), p);
    }
    s.fp64_products = kernels::kFp64Auto;
    assert_routed(decide(routable(), s, amx_machine()), Route::amx_fp64_auto);
    assert_int_equal(route_products(Route::amx_fp64_auto), kernels::kFp64Auto);
    assert_string_equal(route_name(fp64_route(kernels::kFp64Auto)), "fp64-auto");
    assert_string_equal(route_name(fp64_route(36)), "fp64-36");
    // fp32 off does not affect DGEMM, FP64 off does not affect SGEMM.
    s = fp64_on();
    s.fp32 = false;
    assert_routed(decide(routable(), s, amx_machine()), Route::amx_fp64_21);
    assert_routed(decide(routable(Precision::fp32), square(), amx_machine()), Route::amx_fp32);
}

// AMXBLAS_FP64_ENGINE: a fixed count under int8 is the INT8 route, whose moduli are the
// settings'; auto stays the auto route (the kernels pick the engine); under bf16 and auto a
// fixed count is BF16's.
void fp64_engines(void**) {
    using kernels::Fp64Engine;
    Settings s = fp64_on();
    s.fp64_engine = Fp64Engine::int8;
    for (int moduli : {6, 12, 16}) {
        s.fp64_products = moduli;
        const Decision d = decide(routable(), s, amx_machine());
        assert_routed(d, Route::amx_fp64_int8);
        assert_int_equal(route_products(d.route, s), moduli);
        assert_int_equal(route_products(d.route), 0);  // the route does not carry the count
    }
    s.fp64_products = kernels::kFp64Auto;
    assert_routed(decide(routable(), s, amx_machine()), Route::amx_fp64_auto);
    assert_int_equal(route_products(Route::amx_fp64_auto, s), kernels::kFp64Auto);
    s.fp64_products = 0;
    assert_reason(decide(routable(), s, amx_machine()), reason::fp64_disabled);
    // SGEMM is not the engines' business.
    assert_routed(decide(routable(Precision::fp32), s, amx_machine()), Route::amx_fp32);
    for (Fp64Engine engine : {Fp64Engine::bf16, Fp64Engine::automatic}) {
        s.fp64_engine = engine;
        s.fp64_products = 21;
        const Decision d = decide(routable(), s, amx_machine());
        assert_routed(d, Route::amx_fp64_21);
        assert_int_equal(route_products(d.route, s), 21);
        s.fp64_products = 12;  // INT8's count, not BF16's
        assert_reason(decide(routable(), s, amx_machine()), reason::fp64_disabled);
        s.fp64_products = kernels::kFp64Auto;
        assert_routed(decide(routable(), s, amx_machine()), Route::amx_fp64_auto);
    }
    assert_int_equal(static_cast<int>(fp64_route(Fp64Engine::int8, 14)), static_cast<int>(Route::amx_fp64_int8));
    assert_int_equal(static_cast<int>(fp64_route(Fp64Engine::int8, 0)), static_cast<int>(Route::forward));
    assert_int_equal(static_cast<int>(fp64_route(Fp64Engine::automatic, 14)), static_cast<int>(Route::forward));
    assert_int_equal(static_cast<int>(fp64_route(Fp64Engine::bf16, 36)), static_cast<int>(Route::amx_fp64_36));
}

void shape_rule(void**) {
    GemmCall c = routable();
    c.n = 600;
    c.ldb = c.k;
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::shape_not_square);
    c = routable();
    c.k = 600;
    c.lda = c.m;
    c.ldb = c.k;
    assert_reason(decide(c, fp64_on(), amx_machine()), reason::shape_not_square);
    Settings any = fp64_on();
    any.shapes = ShapeRule::any;
    assert_routed(decide(c, any, amx_machine()), Route::amx_fp64_21);
    // Transposes do not matter to the shape rule.
    c = routable();
    c.transa = 't';
    c.transb = 'C';
    assert_routed(decide(c, fp64_on(), amx_machine()), Route::amx_fp64_21);
}

void min_n_boundaries(void**) {
    Settings s = fp64_on();  // min_n = 256
    assert_reason(decide(routable(Precision::fp64, 255), s, amx_machine()),
                  reason::size_below_min_n);
    assert_routed(decide(routable(Precision::fp64, 256), s, amx_machine()), Route::amx_fp64_21);
    // With any shape, the smallest of m, n, k counts.
    s.shapes = ShapeRule::any;
    for (int which = 0; which < 3; ++which) {
        GemmCall c = routable(Precision::fp64, 1024);
        std::int64_t* dim = which == 0 ? &c.m : which == 1 ? &c.n : &c.k;
        *dim = 255;
        c.lda = c.m;
        c.ldb = c.k;
        c.ldc = c.m;
        assert_reason(decide(c, s, amx_machine()), reason::size_below_min_n);
        *dim = 256;
        c.lda = c.m;
        c.ldb = c.k;
        c.ldc = c.m;
        assert_routed(decide(c, s, amx_machine()), Route::amx_fp64_21);
    }
    s.min_n = 1;
    assert_routed(decide(routable(Precision::fp64, 1), s, amx_machine()), Route::amx_fp64_21);
}

void backends(void**) {
    Hardware none;
    none.cores = 8;
    Hardware emulator = none;
    emulator.amx_emulator = true;
    Hardware bf16_only = none;
    bf16_only.set_runs(kernels::Backend::avx512, true);
    Settings s = fp64_on();
    struct Case {
        BackendChoice choice;
        const Hardware* hw;
        const char* reason;
        kernels::Backend backend;
    } cases[] = {
        {BackendChoice::automatic, &none, reason::backend_no_amx, kernels::Backend::reference},
        {BackendChoice::automatic, &emulator, reason::backend_no_amx, kernels::Backend::reference},
        {BackendChoice::automatic, &bf16_only, reason::backend_no_amx, kernels::Backend::reference},
        {BackendChoice::amx, &none, reason::backend_no_amx, kernels::Backend::reference},
        {BackendChoice::amx, &emulator, nullptr, kernels::Backend::amx},
        {BackendChoice::avx512, &none, reason::backend_no_avx512_bf16, kernels::Backend::reference},
        {BackendChoice::avx512, &bf16_only, nullptr, kernels::Backend::avx512},
        {BackendChoice::reference, &none, nullptr, kernels::Backend::reference},
    };
    for (const Case& c : cases) {
        s.backend = c.choice;
        const Decision d = decide(routable(), s, *c.hw);
        if (c.reason) {
            assert_reason(d, c.reason);
        } else {
            assert_routed(d, Route::amx_fp64_21);
            assert_int_equal(static_cast<int>(d.backend), static_cast<int>(c.backend));
        }
    }
    const Hardware amx = amx_machine();
    for (BackendChoice c : {BackendChoice::automatic, BackendChoice::amx}) {
        s.backend = c;
        const Decision d = decide(routable(), s, amx);
        assert_routed(d, Route::amx_fp64_21);
        assert_int_equal(static_cast<int>(d.backend), static_cast<int>(kernels::Backend::amx));
    }
}

// The first failing check is the reason: build a call that fails every check, then repair
// them one at a time and watch the reason move down the list.
void check_order(void**) {
    GemmCall c = routable(Precision::fp64, 100);
    c.n = 0;
    c.k = 0;
    c.ldc = 0;  // invalid (LDC < max(1, m))
    c.alpha_is_zero = true;
    Settings s = square();  // fp64 off, square, min_n 256, automatic backend
    Hardware none;
    const char* expected[] = {reason::args_invalid, reason::size_empty, reason::size_k_zero,
                              reason::alpha_zero, reason::fp64_disabled,
                              reason::shape_not_square, reason::size_below_min_n,
                              reason::fenv_rounding, reason::backend_no_amx};
    c.rounds_to_nearest = false;
    for (int step = 0;; ++step) {
        const Decision d = decide(c, s, none);
        if (step == 9) {
            assert_routed(d, Route::amx_fp64_6);
            break;
        }
        assert_reason(d, expected[step]);
        switch (step) {
            case 0: c.ldc = 100; break;
            case 1: c.n = 300; break;
            case 2: c.k = 100; break;
            case 3: c.alpha_is_zero = false; break;
            case 4: s.fp64_products = 6; break;
            case 5: c.m = c.n = c.k = c.lda = c.ldb = c.ldc = 200; break;
            case 6: s.min_n = 200; break;
            case 7: c.rounds_to_nearest = true; break;
            case 8: none.set_runs(kernels::Backend::amx, true); break;
        }
    }
}

// --- the caller's floating-point environment. ----------------------------------------------

// A caller rounding other than to nearest: every call that would be routed is forwarded with
// fenv:rounding (before the cost model: nothing is priced that cannot run); the earlier
// reasons, beta-scale included, are unchanged.
void fenv_rounding(void**) {
    for (Precision p : {Precision::fp32, Precision::fp64}) {
        GemmCall c = routable(p);
        c.rounds_to_nearest = false;
        assert_reason(decide(c, fp64_on(), amx_machine()), reason::fenv_rounding);
        Settings any = fp64_on();
        any.shapes = ShapeRule::automatic;  // the cost model is not consulted
        const Decision d = decide(c, any, amx_machine());
        assert_reason(d, reason::fenv_rounding);
        assert_true(d.predicted_speedup == 0);
        c.alpha_is_zero = true;
        assert_int_equal(static_cast<int>(decide(c, fp64_on(), amx_machine()).route), static_cast<int>(Route::beta_scale));
        c = routable(p, 100);
        c.rounds_to_nearest = false;
        assert_reason(decide(c, fp64_on(), amx_machine()), reason::size_below_min_n);
    }
}

// decide() prices a call (AMXBLAS_SHAPES=auto) under the library's own environment: whatever
// the caller's traps, FTZ, DAZ and flags, it neither traps nor changes the MXCSR, and it
// predicts the same. A sweep of shapes from 1 to 2^20, each precision and backend.
void decide_keeps_the_mxcsr(void**) {
    namespace mx = kernels::mxcsr;
    Settings s;
    s.fp64_products = kernels::kFp64Auto;
    s.min_n = 1;
    s.num_threads = 8;
    const unsigned caller = (mx::kMasks & ~(0x01u | 0x04u | 0x08u | 0x10u | 0x02u)) | mx::kFlushToZero |
                            mx::kDenormalsAreZero | 0x10u;  // traps but inexact's, underflow raised
    const unsigned saved = kernels::read_mxcsr();
    for (int backend = 0; backend < kernels::kBackendCount; ++backend) {
        Hardware hw;
        hw.set_runs(static_cast<kernels::Backend>(backend), true);
        hw.cores = 2;
        s.backend = static_cast<BackendChoice>(backend + 1);
        for (Precision p : {Precision::fp32, Precision::fp64})
            for (bool complex : {false, true})
                for (std::int64_t m = 1; m <= (1 << 20); m *= 8)
                    for (std::int64_t k = 1; k <= (1 << 20); k *= 16) {
                        GemmCall c = routable(p);
                        c.complex = complex;
                        c.m = c.lda = c.ldc = m;
                        c.n = 4096;
                        c.k = c.ldb = k;
                        const Decision quiet = decide(c, s, hw);
                        kernels::write_mxcsr(caller);
                        const Decision d = decide(c, s, hw);
                        const unsigned after = kernels::read_mxcsr();
                        kernels::write_mxcsr(saved);
                        assert_int_equal(after, caller);
                        assert_true(d.predicted_speedup == quiet.predicted_speedup);
                        assert_true(quiet.predicted_speedup > 0);
                    }
    }
}

// --- threads. ----------------------------------------------------------------------------

void threads_notes(void**) {
    Settings s = fp64_on();  // 8 threads
    Hardware hw = amx_machine();  // 8 cores
    GemmCall c = routable();

    c.in_parallel_region = true;
    Decision d = decide(c, s, hw);
    assert_routed(d, Route::amx_fp64_21);
    assert_int_equal(d.threads, 1);
    assert_string_equal(d.threads_note, reason::threads_in_parallel_region);
    c.concurrent_routed_calls = 3;  // the parallel region rule wins: one thread
    d = decide(c, s, hw);
    assert_int_equal(d.threads, 1);
    assert_string_equal(d.threads_note, reason::threads_in_parallel_region);

    // Several application threads: an equal share of the cores when the use is unknown...
    c = routable();
    c.concurrent_routed_calls = 1;
    d = decide(c, s, hw);
    assert_int_equal(d.threads, 4);
    assert_string_equal(d.threads_note, reason::threads_concurrent_calls);
    c.concurrent_routed_calls = 3;
    assert_int_equal(decide(c, s, hw).threads, 2);
    c.concurrent_routed_calls = 20;
    d = decide(c, s, hw);
    assert_int_equal(d.threads, 1);
    assert_string_equal(d.threads_note, reason::threads_concurrent_calls);
    // ...and the free cores when the caller tracks the threads in use.
    c.concurrent_routed_calls = 1;
    c.threads_in_use = 8;
    assert_int_equal(decide(c, s, hw).threads, 1);
    c.threads_in_use = 3;
    assert_int_equal(decide(c, s, hw).threads, 5);
    c.threads_in_use = 0;
    d = decide(c, s, hw);
    assert_int_equal(d.threads, 8);
    assert_null(d.threads_note);

    // Never more threads than cores.
    c = routable();
    s.num_threads = 64;
    d = decide(c, s, hw);
    assert_int_equal(d.threads, 8);
    assert_string_equal(d.threads_note, reason::threads_above_cores);
    hw.cores = 0;  // unknown: treated as one core
    assert_int_equal(decide(c, s, hw).threads, 1);

    // A note only when it lowered the count: one configured thread stays one, silently.
    hw = amx_machine();
    s.num_threads = 1;
    c.in_parallel_region = true;
    d = decide(c, s, hw);
    assert_int_equal(d.threads, 1);
    assert_null(d.threads_note);
    s.num_threads = 0;
    c.in_parallel_region = false;
    assert_int_equal(decide(c, s, hw).threads, 1);
}

void forwarded_calls_have_no_note(void**) {
    GemmCall c = routable(Precision::fp64, 100);
    c.in_parallel_region = true;
    const Decision d = decide(c, fp64_on(), amx_machine());
    assert_reason(d, reason::size_below_min_n);
    assert_null(d.threads_note);
}

void route_names(void**) {
    assert_string_equal(route_name(Route::forward), "forward");
    assert_string_equal(route_name(Route::beta_scale), "beta-scale");
    assert_string_equal(route_name(Route::amx_fp32), "fp32");
    assert_string_equal(route_name(Route::amx_fp64_6), "fp64-6");
    assert_string_equal(route_name(Route::amx_fp64_21), "fp64-21");
    assert_int_equal(static_cast<int>(fp64_route(0)), static_cast<int>(Route::forward));
    assert_int_equal(route_products(Route::amx_fp32), 6);
    assert_int_equal(route_products(Route::forward), 0);
    assert_string_equal(route_name(Route::amx_fp64_int8), "fp64-int8");
    assert_string_equal(route_name(Route::amx_fp64_auto), "fp64-auto");
    for (Route r : {Route::amx_fp64_6, Route::amx_fp64_36, Route::amx_fp64_auto, Route::amx_fp64_int8})
        assert_true(route_is_fp64(r));
    for (Route r : {Route::forward, Route::beta_scale, Route::amx_fp32}) assert_false(route_is_fp64(r));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invalid_parameter_numbers),
        cmocka_unit_test(invalid_parameter_leading_dimensions),
        cmocka_unit_test(routes_by_default),
        cmocka_unit_test(args_invalid),
        cmocka_unit_test(args_nonstandard),
        cmocka_unit_test(size_empty_k_zero_alpha_zero),
        cmocka_unit_test(precision_disabled),
        cmocka_unit_test(fp64_engines),
        cmocka_unit_test(shape_rule),
        cmocka_unit_test(min_n_boundaries),
        cmocka_unit_test(backends),
        cmocka_unit_test(check_order),
        cmocka_unit_test(fenv_rounding),
        cmocka_unit_test(decide_keeps_the_mxcsr),
        cmocka_unit_test(threads_notes),
        cmocka_unit_test(forwarded_calls_have_no_note),
        cmocka_unit_test(route_names),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

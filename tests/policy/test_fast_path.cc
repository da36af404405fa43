// The shim's shortcuts around decide() (issue 45: a call below AMXBLAS_MIN_N costs next to
// nothing more than the real BLAS): forwarded_whatever_else() never says "forward" for a call
// decide() would route or scale, and needs_thread_facts() is false only where decide()'s answer
// does not depend on the call's thread facts. Checked over a grid of calls and settings.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include <cstring>
#include <vector>

#include "policy/reasons.h"
#include "policy/route.h"

using namespace amxblas;

namespace {

std::vector<Settings> settings_grid() {
    std::vector<Settings> all;
    for (bool fp32 : {true, false})
        for (int products : {0, 21, kernels::kFp64Auto, 14})
            for (int min_n : {1, 4, 256})
                for (ShapeRule shapes : {ShapeRule::automatic, ShapeRule::square, ShapeRule::any}) {
                    Settings s;
                    s.fp32 = fp32;
                    s.fp64_products = products;
                    s.fp64_engine = products == 14 ? kernels::Fp64Engine::int8 : kernels::Fp64Engine::automatic;
                    s.min_n = min_n;
                    s.shapes = shapes;
                    s.num_threads = 4;
                    all.push_back(s);
                }
    return all;
}

std::vector<GemmCall> call_grid() {
    std::vector<GemmCall> all;
    const std::int64_t sizes[] = {-1, 0, 1, 3, 4, 255, 256, 300};
    for (Precision p : {Precision::fp32, Precision::fp64})
        for (std::int64_t m : sizes)
            for (std::int64_t n : sizes)
                for (std::int64_t k : sizes)
                    for (bool alpha_zero : {false, true})
                        for (bool nearest : {true, false}) {
                            GemmCall c{};
                            c.precision = p;
                            c.transa = c.transb = 'N';
                            c.m = m, c.n = n, c.k = k;
                            c.lda = c.ldc = m > 1 ? m : 1;
                            c.ldb = k > 1 ? k : 1;
                            c.alpha_is_zero = alpha_zero;
                            c.rounds_to_nearest = nearest;
                            all.push_back(c);
                        }
    return all;
}

Hardware machine(bool amx) {
    Hardware h;
    h.set_runs(kernels::Backend::amx, amx);
    h.set_runs(kernels::Backend::avx512, true);
    h.set_runs(kernels::Backend::reference, true);
    h.cores = 8;
    return h;
}

void forwarded_whatever_else_agrees_with_decide(void**) {
    long shortcuts = 0;
    for (const Settings& s : settings_grid())
        for (const GemmCall& c : call_grid()) {
            if (!forwarded_whatever_else(c.precision, c.m, c.n, c.k, c.alpha_is_zero, s)) continue;
            ++shortcuts;
            for (bool amx : {true, false}) {
                GemmCall with_threads = c;
                with_threads.concurrent_routed_calls = 2;
                for (const GemmCall& x : {c, with_threads}) {
                    const Decision d = decide(x, s, machine(amx));
                    assert_int_equal(static_cast<int>(d.route), static_cast<int>(Route::forward));
                }
            }
        }
    assert_true(shortcuts > 1000);  // the shortcut is taken, not only allowed
    // The calls it is for: below AMXBLAS_MIN_N, and a precision not routed (FP64's default).
    Settings s;
    assert_true(forwarded_whatever_else(Precision::fp64, 4, 4, 4, false, s));
    assert_true(forwarded_whatever_else(Precision::fp64, 4096, 4096, 4096, false, s));  // fp64:disabled
    assert_true(forwarded_whatever_else(Precision::fp32, 255, 4096, 4096, false, s));
    assert_false(forwarded_whatever_else(Precision::fp32, 256, 256, 256, false, s));
    assert_false(forwarded_whatever_else(Precision::fp32, 4, 4, 0, false, s));  // beta-scale
    assert_false(forwarded_whatever_else(Precision::fp32, 4, 4, 4, true, s));   // beta-scale
}

void thread_facts_only_where_they_count(void**) {
    long settled = 0;
    for (const Settings& s : settings_grid())
        for (const GemmCall& c : call_grid()) {
            if (needs_thread_facts(c, s)) continue;
            ++settled;
            GemmCall busy = c;
            busy.in_parallel_region = true;
            busy.concurrent_routed_calls = 3;
            busy.threads_in_use = 7;
            for (bool amx : {true, false}) {
                const Decision a = decide(c, s, machine(amx)), b = decide(busy, s, machine(amx));
                assert_int_equal(static_cast<int>(a.route), static_cast<int>(b.route));
                assert_ptr_equal(a.reason, b.reason);
                assert_int_equal(a.threads, b.threads);
                assert_ptr_equal(a.threads_note, b.threads_note);
            }
        }
    assert_true(settled > 1000);
    // A call every rule lets through needs them.
    Settings s;
    s.shapes = ShapeRule::any;
    GemmCall c{};
    c.precision = Precision::fp32;
    c.transa = c.transb = 'N';
    c.m = c.n = c.k = c.lda = c.ldb = c.ldc = 512;
    assert_true(needs_thread_facts(c, s));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forwarded_whatever_else_agrees_with_decide),
        cmocka_unit_test(thread_facts_only_where_they_count),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

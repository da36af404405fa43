// The replay's exact reference (scripts/replay/exact_sum.h) and its error measure
// (scripts/replay/accuracy.h) against values known exactly: rounding ties, cancellation, the
// subnormal and overflow ends, and random sums checked against 128-bit integer arithmetic.
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstdint>

extern "C" {
#include <cmocka.h>
}

#include "scripts/replay/accuracy.h"
#include "scripts/replay/exact_sum.h"
#include "tests/common/rng.h"

using amxblas::replay::Accuracy;
using amxblas::replay::ExactSum;
using amxblas::replay::GemmFile;

namespace {

const double e = std::ldexp(1.0, -52);  // the unit in the last place of 1

void ties_round_to_even(void**) {
    ExactSum s;
    s.clear();
    s.add(1.0);
    s.add(std::ldexp(1.0, -53));  // half an ulp: a tie, 1 is even
    assert_true(s.rounded() == 1.0);
    s.add(e);  // now 1 + 1.5 ulp: a tie between 1 + e (odd) and 1 + 2e (even)
    assert_true(s.rounded() == 1.0 + 2 * e);
    s.add(std::ldexp(1.0, -200));  // just above the tie: up
    assert_true(s.rounded() == 1.0 + 2 * e);
    s.clear();
    s.add(1.0);
    s.add(std::ldexp(1.0, -53));
    s.add(std::ldexp(1.0, -300));  // just above half an ulp: up
    assert_true(s.rounded() == 1.0 + e);
}

void products_are_exact(void**) {
    // (1 + e)^3 = 1 + 3e + 3e^2 + e^3: rounds to 1 + 3e, and the rest, 3e^2 + e^3, is itself a
    // tie between 3e^2 (mantissa 3 * 2^51, even) and the next double: 3e^2.
    const double x = 1.0 + e;
    ExactSum s;
    s.clear();
    s.add(x, x, x);
    assert_true(s.rounded() == 1.0 + 3 * e);
    assert_true(s.distance_to(1.0 + 3 * e) == 3 * e * e);
    // Cancellation across the whole range: 2^1000 + 2^-1000 - 2^1000.
    s.clear();
    s.add(std::ldexp(1.0, 500), std::ldexp(1.0, 500));
    s.add(std::ldexp(1.0, -1000));
    s.add(-std::ldexp(1.0, 1000));
    assert_true(s.rounded() == std::ldexp(1.0, -1000));
    assert_true(s.distance_to(0) == std::ldexp(1.0, -1000));
    // A negative result.
    s.clear();
    s.add(-3.0, 0.5, 0.25);
    s.add(0.125);
    assert_true(s.rounded() == -0.25);
}

void range_ends(void**) {
    const double tiny = std::ldexp(1.0, -1074);
    ExactSum s;
    s.clear();
    s.add(tiny, tiny, std::ldexp(1.0, 1023));  // 2^-1125: far below the smallest subnormal
    assert_true(s.rounded() == 0.0);
    s.add(tiny, 0.75);  // 0.75 of the smallest subnormal, plus a little: rounds up to it
    assert_true(s.rounded() == tiny);
    s.clear();
    s.add(tiny, 0.5);  // exactly half of it: a tie, 0 is even
    assert_true(s.rounded() == 0.0);
    s.clear();
    s.add(std::ldexp(1.0, 1023), 4.0, 0.25);  // 2^1023, exact though 2^1025 passed on the way
    assert_true(s.rounded() == std::ldexp(1.0, 1023));
    s.add(std::ldexp(1.0, 1023));  // 2^1024: beyond the range
    assert_true(std::isinf(s.rounded()) && s.rounded() > 0);
    s.clear();
    const double big = 1.7976931348623157e308;
    s.add(big, big, big);
    s.add(-big, big, big);
    assert_true(s.rounded() == 0.0);
}

// Random sums of triple products of small integers times powers of two, whose exact value is a
// 128-bit integer times 2^-30 (below 2^96): converted with the compiler's correctly rounded __int128 -> double.
void random_sums_match_integer_arithmetic(void**) {
    amxblas::test::Rng rng(12345);
    auto draw = [&rng](int* exponent, std::int64_t* integer) {
        *integer = static_cast<std::int64_t>(rng.below(2047)) - 1023;
        *exponent = rng.below(21) - 10;
        return std::ldexp(static_cast<double>(*integer), *exponent);
    };
    for (int trial = 0; trial < 2000; ++trial) {
        ExactSum s;
        s.clear();
        __int128 exact = 0;  // in units of 2^-30
        const int terms = 1 + rng.below(64);
        for (int t = 0; t < terms; ++t) {
            int ex, ey, ez;
            std::int64_t ix, iy, iz;
            const double x = draw(&ex, &ix), y = draw(&ey, &iy), z = draw(&ez, &iz);
            s.add(x, y, z);
            exact += static_cast<__int128>(ix) * iy * iz * (static_cast<__int128>(1) << (ex + ey + ez + 30));
        }
        const double want = std::ldexp(static_cast<double>(exact), -30);
        assert_true(s.rounded() == want);
    }
}

// 1 x 1 x 1 DGEMM, 3 * fl(1/3) = 1 - 2^-54 exactly (no double), computed as 1: error
// 2^-54 / (1 - 2^-54), and
// the bound's denominator gamma_1 + gamma_2 (1 + gamma_1) times |a||b|.
void measure_one_entry(void**) {
    GemmFile g;
    g.routine = "dgemm";
    g.m = g.n = g.k = 1;
    g.lda = g.ldb = g.ldc = 1;
    g.a_rows = g.a_cols = g.b_rows = g.b_cols = 1;
    g.alpha[0] = 1;
    g.a = {3.0};
    g.b = {1.0 / 3};
    g.c = {0.0};
    const Accuracy acc = amxblas::replay::measure(g, {1.0});
    const long double ab = 1 - std::ldexp(1.0L, -54);  // |a||b|, exact in long double
    assert_true(acc.defined);
    assert_true(std::fabs(acc.error / static_cast<double>(std::ldexp(1.0L, -54) / ab) - 1) < 1e-15);
    const long double u = std::ldexp(1.0L, -53), g1 = u / (1 - u), g2 = 2 * u / (1 - 2 * u);
    assert_true(std::fabs(acc.bound / static_cast<double>(std::ldexp(1.0L, -54) / ((g1 + g2 * (1 + g1)) * ab)) - 1) < 1e-12);
    // An exact result: no error. A NaN in A: no exact result.
    g.b = {0.5};
    assert_true(amxblas::replay::measure(g, {1.5}).error == 0);
    assert_true(amxblas::replay::measure(g, {1.5 + 2 * e}).error == 2 * e / 1.5);
    g.a = {NAN};
    assert_false(amxblas::replay::measure(g, {1.0}).defined);
    // ALPHA = 0 reads neither A nor B: C := BETA * C.
    g.alpha[0] = 0;
    g.beta[0] = 2;
    g.c = {0.1};
    const Accuracy scaled = amxblas::replay::measure(g, {0.2});
    assert_true(scaled.defined && scaled.error == 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ties_round_to_even),
        cmocka_unit_test(products_are_exact),
        cmocka_unit_test(range_ends),
        cmocka_unit_test(random_sums_match_integer_arithmetic),
        cmocka_unit_test(measure_one_entry),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// The sample screen's loops (kernels/isa/screen_loops.h): the portable build computes each
// value as written, in index order, and the instruction set under test gives the same bits.
// Inputs are magnitudes as the screen scales them (in [0, 1], zeros and values far below 1
// among them), slice constants over the range the split uses, and sizes that leave vector and
// register-block remainders.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/isa/isa.h"
#include "tests/common/rng.h"
#include "tests/kernels/isa/isa_under_test.h"

using namespace amxblas::kernels;
using namespace amxblas::kernels::detail;

namespace {

amxblas::kernels::Isa g_isa = amxblas::kernels::Isa::portable;

std::vector<double> magnitudes(amxblas::test::Rng& rng, std::size_t count) {
    std::vector<double> v(count);
    for (double& x : v) {
        const int kind = rng.below(8);
        x = kind == 0 ? 0.0 : std::ldexp(rng.uniform01(), kind == 1 ? -int(rng.below(60)) : 0);
    }
    return v;
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
}

// Eight slices, as bf16_residual takes them: each one's constant from the residual before it.
void test_slice(void**) {
    amxblas::test::Rng rng(71);
    const ScreenLoops& portable = screen_loops_portable();
    const ScreenLoops& tested = *isa_kernels(g_isa).screen;
    for (std::size_t count : {std::size_t(1), std::size_t(7), std::size_t(64), std::size_t(257), std::size_t(4096)}) {
        std::vector<double> want = magnitudes(rng, count), got = want, mine = want;
        for (int t = 0; t < 8; ++t) {
            const double sigma = std::ldexp(1.5, 45 - 8 * t);
            double mx = 0;
            for (double& w : want) {
                const double z = (w + sigma) - sigma;
                w -= z;
                mx = std::max(mx, std::fabs(w));
            }
            const double p = portable.slice(mine.data(), count, sigma), q = tested.slice(got.data(), count, sigma);
            assert_true(p == mx && q == mx);
            assert_true(same_bits(mine, want) && same_bits(got, want));
        }
    }
}

void test_upper(void**) {
    amxblas::test::Rng rng(73);
    const ScreenLoops& portable = screen_loops_portable();
    const ScreenLoops& tested = *isa_kernels(g_isa).screen;
    for (int m : {1, 5, 8, 13, 16})
        for (int n : {1, 3, 4, 9})
            for (int k : {1, 17, 256}) {
                const int lda = m + 3, ldy = k + 1, ldo = m + 2;
                const std::vector<double> a = magnitudes(rng, std::size_t(lda) * k);
                const std::vector<double> y = magnitudes(rng, std::size_t(ldy) * n);
                std::vector<double> want(std::size_t(ldo) * n, -1.0), p = want, q = want;
                for (int j = 0; j < n; ++j)
                    for (int i = 0; i < m; ++i) {
                        double s = 0;
                        for (int l = 0; l < k; ++l) s += a[i + std::size_t(l) * lda] * y[l + std::size_t(j) * ldy];
                        want[i + std::size_t(j) * ldo] = s;
                    }
                portable.upper(a.data(), lda, y.data(), ldy, m, n, k, p.data(), ldo);
                tested.upper(a.data(), lda, y.data(), ldy, m, n, k, q.data(), ldo);
                if (!same_bits(p, want) || !same_bits(q, want))
                    fail_msg("isa %s, m %d n %d k %d: the sums differ from index order", isa_name(g_isa), m, n, k);
            }
}

}  // namespace

int main() {
    g_isa = amxblas::test::isa_under_test("kernels_screen_loops_test");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_upper),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

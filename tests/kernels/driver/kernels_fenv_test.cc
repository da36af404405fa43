// The kernels' arithmetic raises no invalid, divide-by-zero or overflow flag on finite
// in-domain inputs whose result is finite (docs/semantics.md, "The floating-point environment"):
// the shim reads those flags, after a routed call, as the result's own (shim/result_flags.h),
// so one raised anywhere else would reach the caller, or trap there, for nothing. Every
// precision, every BF16 product count, every INT8 count, auto under each engine, on one and two
// threads (the pool gathers its workers' flags into the caller's: thread_pool.h), on inputs that
// reach the certificates' corners: uniform, wide exponent ranges, huge and tiny scales, zero
// rows and columns, a dominant entry, K = 1 and 2. And that a call leaves C's overflow to the
// flags: an overflowing C raises overflow.
#include "tests/kernels/kernels_test_util.h"

#include <cfloat>
#include <map>
#include <string>

#include "kernels/common/fp_environment.h"
#include "kernels/common/variants.h"

namespace {

using amxblas::kernels::emulate_gemm;
using amxblas::kernels::Fp64Engine;
using amxblas::kernels::GemmArgs;
using amxblas::kernels::kFp64Auto;
using amxblas::kernels::LibraryFpEnvironment;
namespace mx = amxblas::kernels::mxcsr;

constexpr unsigned kForbidden = mx::kInvalid | 0x0004 /* divide by zero */ | mx::kOverflow;

// The shapes of the inputs.
enum class Kind { uniform, wide, huge, tiny, zero_lines, dominant };
const char* name(Kind k) {
    switch (k) {
        case Kind::uniform: return "uniform";
        case Kind::wide: return "wide";
        case Kind::huge: return "huge";
        case Kind::tiny: return "tiny";
        case Kind::zero_lines: return "zero_lines";
        case Kind::dominant: return "dominant";
    }
    return "?";
}

// Entry (i, l) of an rows x cols column-major operand; `a` tells op(A) (rows of C) from op(B).
template <typename R>
R entry(Kind kind, amxblas::test::Rng& r, bool a, int i, int l) {
    const double u = r.uniform();
    switch (kind) {
        case Kind::uniform: return R(u);
        case Kind::wide: return R(std::ldexp(u, int(std::lround(r.uniform() * (sizeof(R) == 4 ? 40 : 300)))));
        // |A||B| near 2^1000 (C finite: K * 2^1000 < DBL_MAX), and its reciprocal scale; FP32
        // stays inside the domain rules (2^-60 .. 2^60).
        case Kind::huge: return R(std::ldexp(u, sizeof(R) == 4 ? 30 : (a ? 600 : 400)));
        case Kind::tiny: return R(std::ldexp(u, sizeof(R) == 4 ? -40 : (a ? -600 : -420)));
        case Kind::zero_lines: return (i % 3 == 1) ? R(0) : R(u);
        case Kind::dominant: return (i == 0 && l == 0) ? R(std::ldexp(1.0, sizeof(R) == 4 ? 20 : 200)) : R(u);
    }
    return R(0);
}

template <typename T>
using Real = typename std::conditional_t<std::is_same_v<T, std::complex<float>>, float,
                                         std::conditional_t<std::is_same_v<T, std::complex<double>>, double, T>>;

template <typename T>
T make(Kind kind, amxblas::test::Rng& r, bool a, int i, int l) {
    using R = Real<T>;
    if constexpr (std::is_same_v<T, R>) return entry<R>(kind, r, a, i, l);
    else return T(entry<R>(kind, r, a, i, l), entry<R>(kind, r, a, i, l));
}

// One call: the flags the kernels raised (on the calling thread, with its workers'); *why is the
// reason when they forwarded it (the certificate may refuse such data: its arithmetic still
// must not raise).
template <typename T>
unsigned flags_of(int m, int n, int k, Kind kind, Fp64Engine engine, int products, int threads, const char** why) {
    amxblas::test::Rng r(std::uint64_t(m) * 7919 + n * 31 + k + int(kind) * 1000003);
    // op(A) = A^T for one case in two, so both layouts of each operand are read.
    const char ta = (m + k) % 2 ? 'T' : 'N';
    const int lda = ta == 'N' ? m + 1 : k + 1, ldb = k + 2, ldc = m + 3;
    std::vector<T> a(std::size_t(lda) * (ta == 'N' ? k : m)), b(std::size_t(ldb) * n), c(std::size_t(ldc) * n);
    for (int i = 0; i < m; ++i)
        for (int l = 0; l < k; ++l) a[ta == 'N' ? i + std::size_t(l) * lda : l + std::size_t(i) * lda] = make<T>(kind, r, true, i, l);
    for (int j = 0; j < n; ++j)
        for (int l = 0; l < k; ++l) b[l + std::size_t(j) * ldb] = make<T>(kind, r, false, j, l);
    for (auto& x : c) x = T(r.uniform());
    GemmArgs<T> g{ta, 'N', m, n, k, T(1.5), a.data(), lda, b.data(), ldb, T(-0.5), c.data(), ldc};
    auto opt = kt::options(products, threads);
    opt.fp64_engine = engine;
    const LibraryFpEnvironment own_arithmetic;
    *why = emulate_gemm(g, opt);
    return own_arithmetic.raised();
}

template <typename T>
void check_all(const char* precision, bool fp64) {
    struct Mode {
        Fp64Engine engine;
        int products;
    };
    std::vector<Mode> modes;
    if (!fp64) {
        modes.push_back({Fp64Engine::bf16, 21});
    } else {
        // Quick (under the AMX harness, where each tile instruction is trapped): the ends and
        // the middle of each engine's counts.
        for (const amxblas::kernels::Variant& v : amxblas::kernels::kVariants)
            if (v.precision == amxblas::kernels::Precision::fp64 && (!kt::g_quick || v.products == 6 || v.products == 21))
                modes.push_back({Fp64Engine::bf16, v.products});
        for (int p = 6; p <= 24; ++p)
            if (!kt::g_quick || p == 6 || p == 14 || p == 24) modes.push_back({Fp64Engine::int8, p});
        for (Fp64Engine e : {Fp64Engine::automatic, Fp64Engine::int8, Fp64Engine::bf16}) modes.push_back({e, kFp64Auto});
    }
    // The last shape (several 256-deep panels, more than one block) for the counts auto picks.
    const int shapes[][3] = {{5, 7, 2}, {40, 33, 70}, {9, 300, 1}, {70, 64, 260}};
    int calls = 0, bad = 0, computed = 0;
    std::map<std::string, int> forwarded;
    for (const Mode& mode : modes)
        for (const auto& s : shapes)
            for (Kind kind : {Kind::uniform, Kind::wide, Kind::huge, Kind::tiny, Kind::zero_lines, Kind::dominant})
                for (int threads : {1, 2}) {
                    const bool deep = s[2] > 100;
                    if ((deep && mode.products != kFp64Auto && mode.products != 21) ||
                        (kt::g_quick && (threads == 2 || deep)))
                        continue;
                    const char* why = nullptr;
                    const unsigned f = flags_of<T>(s[0], s[1], s[2], kind, mode.engine, mode.products, threads, &why);
                    ++calls;
                    if (why) ++forwarded[why];
                    else ++computed;
                    if (f & kForbidden) {
                        ++bad;
                        std::printf("FAIL %s engine=%d products=%d %dx%dx%d %s threads=%d: flags %#x (forwarded: %s)\n",
                                    precision, int(mode.engine), mode.products, s[0], s[1], s[2], name(kind), threads,
                                    f, why ? why : "no");
                    }
                }
    std::printf("# %s: %d calls, %d computed, %d raised invalid, divide-by-zero or overflow\n", precision, calls,
                computed, bad);
    for (const auto& [reason, count] : forwarded) std::printf("#   forwarded %d: %s\n", count, reason.c_str());
    assert_int_equal(bad, 0);
    // The check means something only for calls the kernels computed: most must be, and a call is
    // forwarded only where the certificate refuses the data.
    assert_true(computed * 2 > calls);
    for (const auto& [reason, count] : forwarded)
        if (reason != "accuracy:uncertified") fail_msg("%s: %d calls forwarded for %s", precision, count, reason.c_str());
}

void sgemm_raises_nothing(void**) { check_all<float>("sgemm", false); }
void cgemm_raises_nothing(void**) { check_all<std::complex<float>>("cgemm", false); }
void dgemm_raises_nothing(void**) { check_all<double>("dgemm", true); }
void zgemm_raises_nothing(void**) { check_all<std::complex<double>>("zgemm", true); }

// C that overflows: the flag the shim reads is there (every FP64 route).
void overflowing_c_raises_overflow(void**) {
    const int m = 8, n = 8, k = 300;
    std::vector<double> a(std::size_t(m) * k, std::ldexp(1.0, 600)), b(std::size_t(k) * n, std::ldexp(1.0, 600)),
        c(std::size_t(m) * n, 1.0);
    int computed = 0;
    for (Fp64Engine e : {Fp64Engine::bf16, Fp64Engine::int8, Fp64Engine::automatic})
        for (int products : {21, kFp64Auto}) {
            std::vector<double> out = c;
            GemmArgs<double> g{'N', 'N', m, n, k, 1.5, a.data(), m, b.data(), k, -0.5, out.data(), m};
            auto opt = kt::options(products, 1);
            opt.fp64_engine = e;
            unsigned raised;
            const char* why;
            {
                const LibraryFpEnvironment own_arithmetic;
                why = emulate_gemm(g, opt);
                raised = own_arithmetic.raised();
            }
            std::printf("# overflow: engine=%d products=%d: %s\n", int(e), products, why ? why : "computed");
            if (why) continue;  // forwarded: the real BLAS raises its own
            ++computed;
            assert_true(std::isinf(out[0]) && out[0] > 0);
            assert_true(raised & mx::kOverflow);
        }
    assert_int_equal(computed, 6);  // every engine and count computes this C (none refuses it)
}

}  // namespace

int main(int argc, char** argv) {
    if (const int rc = kt::setup(argc, argv)) return rc;
    const CMUnitTest tests[] = {
        cmocka_unit_test(sgemm_raises_nothing),  cmocka_unit_test(cgemm_raises_nothing),
        cmocka_unit_test(dgemm_raises_nothing),  cmocka_unit_test(zgemm_raises_nothing),
        cmocka_unit_test(overflowing_c_raises_overflow),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

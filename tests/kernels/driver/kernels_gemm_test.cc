// The emulated GEMM entry points against OpenBLAS: general shapes, transposes, leading
// dimensions, alpha/beta, beta = 0 over NaN, bitwise reproducibility of the FP64 path,
// and the failure contract (reason returned, C untouched).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/common/chunk_plan.h"
#include "kernels/common/int8_chunk_plan.h"
#include "kernels/int8/crt_basis.h"
#include "kernels/int8/int8_gemm.h"
#include "kernels/common/variants.h"
#include "kernels/runtime/workspace.h"
#include "kernels/scan/operand_scan.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

template <typename T>
struct Problem {
    GemmArgs<T> g;
    std::vector<T> a, b, c;
};

template <typename T>
Problem<T> make_problem(char ta, char tb, int m, int n, int k, T alpha, T beta, std::uint64_t seed, int pad = 3) {
    Problem<T> p;
    const int arows = ta == 'N' ? m : k, acols = ta == 'N' ? k : m;
    const int brows = tb == 'N' ? k : n, bcols = tb == 'N' ? n : k;
    const int lda = arows + pad, ldb = brows + pad, ldc = m + pad;
    p.a = kt::random_matrix<T>(std::size_t(lda) * acols, seed);
    p.b = kt::random_matrix<T>(std::size_t(ldb) * bcols, seed + 1);
    p.c = beta == T(0) ? std::vector<T>(std::size_t(ldc) * n, T(NAN)) : kt::random_matrix<T>(std::size_t(ldc) * n, seed + 2);
    p.g = GemmArgs<T>{ta, tb, m, n, k, alpha, p.a.data(), lda, p.b.data(), ldb, beta, p.c.data(), ldc};
    return p;
}

// Elementwise bound on |C - C_openblas|. FP32: three RNE slices leave 2^-24 relative per
// operand; omitted products and FP32 accumulation add O(K) units of 2^-24 of |A||B| (the
// OpenBLAS reference has the same order of error). FP64 with d diagonals: slices are scaled to
// each row's (column's) maximum, so the omitted tail is bounded by K max|A(i,:)| max|B(:,j)|
// times about 32 * 2^-9d (d products per diagonal, each slice <= 2^(v - 9i) < 2^(1 - 9i) of
// the row maximum), and the residuals by 2^-53 of it (kernels_split_test.cc); plus FP64
// rounding of the sums.
template <typename T>
double tolerance(const Problem<T>& p, const std::vector<double>& ab, std::size_t idx, const T c0, int products,
                 double maxa, double maxb) {
    const double k = p.g.k, alpha = std::fabs(double(p.g.alpha)), beta = std::fabs(double(p.g.beta));
    const double beta_c = beta == 0 ? 0 : beta * std::fabs(double(c0));
    if constexpr (sizeof(T) == 4) {
        return 0x1p-23 * (k + 8) * (alpha * ab[idx] + beta_c);
    } else {
        const int d = fp64_depth(products);
        const double tail = std::ldexp(32.0, -9 * d) + 0x1p-50;
        return alpha * k * maxa * maxb * tail + 0x1p-50 * (k + 4) * (alpha * ab[idx] + beta_c);
    }
}

template <typename T>
void check_against_blas(Problem<T>& p, int products, int threads) {
    const std::vector<T> c0 = p.c;
    std::vector<T> want = p.c;
    kt::blas_gemm(p.g, want.data());
    const char* why;
    if constexpr (sizeof(T) == 4) why = amxblas::kernels::emulate_gemm(p.g, kt::options(products, threads));
    else why = amxblas::kernels::emulate_gemm(p.g, kt::options(products, threads));
    if (why) fail_msg("forwarded: %s", why);
    const std::vector<double> ab = kt::abs_product(p.g);
    // FP32: the matrix maxima; FP64: each row's and column's (the FP64 split's scaling).
    std::vector<double> maxa(p.g.m), maxb(p.g.n);
    for (int i = 0; i < p.g.m; ++i)
        for (int l = 0; l < p.g.k; ++l) maxa[i] = std::fmax(maxa[i], std::fabs(double(kt::op_at(p.g.transa, p.g.a, p.g.lda, i, l))));
    for (int l = 0; l < p.g.k; ++l)
        for (int j = 0; j < p.g.n; ++j) maxb[j] = std::fmax(maxb[j], std::fabs(double(kt::op_at(p.g.transb, p.g.b, p.g.ldb, l, j))));
    if constexpr (sizeof(T) == 4) {
        const double ma = *std::max_element(maxa.begin(), maxa.end()), mb = *std::max_element(maxb.begin(), maxb.end());
        std::fill(maxa.begin(), maxa.end(), ma);
        std::fill(maxb.begin(), maxb.end(), mb);
    }
    for (int j = 0; j < p.g.n; ++j)
        for (int i = 0; i < p.g.ldc; ++i) {
            const std::size_t idx = i + std::size_t(j) * p.g.ldc;
            if (i >= p.g.m) {  // padding rows of C: untouched
                assert_memory_equal(&p.c[idx], &c0[idx], sizeof(T));
                continue;
            }
            const double tol = tolerance(p, ab, i + std::size_t(j) * p.g.m, c0[idx], products, maxa[i], maxb[j]);
            const double d = double(p.c[idx]) - double(want[idx]);
            if (!(std::fabs(d) <= tol))
                fail_msg("%c%c m=%d n=%d k=%d alpha=%g beta=%g products=%d: C(%d,%d) = %.17g, OpenBLAS %.17g, tol %.3g",
                         p.g.transa, p.g.transb, p.g.m, p.g.n, p.g.k, double(p.g.alpha), double(p.g.beta), products, i, j,
                         double(p.c[idx]), double(want[idx]), tol);
        }
}

const int kSizes[] = {1, 2, 31, 32, 33, 255, 256, 257, 300};
constexpr int kNumSizes = 9;
const char kTrans[4][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 't'}};
const double kAlphaBeta[][2] = {{1, 0}, {-0.5, 1}, {1, -0.5}, {-0.5, 0}, {1, 1}, {-0.5, -0.5}};
const auto& kProducts = kFp64Products;  // every FP64 variant of kernels/common/variants.def

// Shapes (S[i], S[i+4], S[i+7]) (indices mod 9): every size appears once in every dimension.
template <typename T>
void shapes_test() {
    int q = 0;
    const int stride = kt::g_quick ? 3 : 1;
    for (int i = 0; i < kNumSizes; i += stride) {
        const int m = kSizes[i], n = kSizes[(i + 4) % kNumSizes], k = kSizes[(i + 7) % kNumSizes];
        for (const auto& t : kTrans) {
            const auto& ab = kAlphaBeta[q % 6];
            const int products = kProducts[q % std::size(kProducts)];
            ++q;
            Problem<T> p = make_problem<T>(t[0], t[1], m, n, k, T(ab[0]), T(ab[1]), 100 + q);
            check_against_blas(p, products, 1 + q % 2);
        }
    }
}

void test_sgemm_shapes(void**) { shapes_test<float>(); }
void test_dgemm_shapes(void**) { shapes_test<double>(); }

// Larger than one block in every dimension, with partial blocks and panels.
template <typename T>
void big_shape_test() {
    const int m = kt::g_quick ? 100 : 300, n = kt::g_quick ? 70 : 290, k = kt::g_quick ? 300 : 530;
    int q = 0;
    for (const auto& t : kTrans) {
        Problem<T> p = make_problem<T>(t[0], t[1], m, n, k, T(-0.5), T(q % 2 ? 0 : 1), 7 + q, 5);
        check_against_blas(p, kProducts[q % std::size(kProducts)], 2);
        ++q;
    }
}

void test_sgemm_big(void**) { big_shape_test<float>(); }
void test_dgemm_big(void**) { big_shape_test<double>(); }

// Every per-panel FP32 sum of the FP64 method is exact, so neither the backend nor the thread
// count may change a bit.
void test_dgemm_bitwise_reproducible(void**) {
    const int m = kt::g_quick ? 64 : 200, n = kt::g_quick ? 40 : 140, k = kt::g_quick ? 300 : 530;
    for (int products : kProducts) {
        Problem<double> p = make_problem<double>('N', 'T', m, n, k, 1.0, 0.0, 31 + products);
        std::vector<double> first;
        for (int run = 0; run < 3; ++run) {
            RunOptions o = kt::options(products, run == 1 ? 2 : 1);
            if (run == 2) o.backend = Backend::reference;
            if (run == 2 && kt::g_backend == Backend::reference) o.threads = 2;
            std::fill(p.c.begin(), p.c.end(), NAN);
            assert_null(amxblas::kernels::emulate_gemm(p.g, o));
            if (run == 0) first = p.c;
            else if (std::memcmp(first.data(), p.c.data(), first.size() * sizeof(double)) != 0)
                fail_msg("products=%d run %d differs (%s, %d threads)", products, run, backend_name(o.backend), o.threads);
        }
    }
}

// A call with few 256 x 256 blocks per thread is cut into smaller ones (kernels/bf16/macro_kernel.h, Blocking):
// the blocks a call has then depend on its thread count, and the result may not. SGEMM
// on 2, 3 and 5 threads against 1 (whose blocks are never cut), bit for bit, on shapes
// with one, a few and many blocks, beta != 0 (the writer reads C) and padded C.
template <typename T>
void same_bits_for_any_thread_count() {
    const int shapes[][3] = {{256, 256, 256}, {200, 140, 530}, {33, 700, 300}, {300, 290, 100}};
    const int quick_shapes[][3] = {{100, 70, 40}, {33, 130, 20}};
    const int count = kt::g_quick ? 2 : 4;
    for (int q = 0; q < count; ++q) {
        const int* s = kt::g_quick ? quick_shapes[q] : shapes[q];
        Problem<T> p = make_problem<T>('N', 'T', s[0], s[1], s[2], T(-0.5), T(1), 41 + q);
        const std::vector<T> c0 = p.c;
        std::vector<T> first;
        for (int threads : {1, 2, 3, 5}) {
            p.c = c0;
            p.g.c = p.c.data();
            assert_null(amxblas::kernels::emulate_gemm(p.g, kt::options(6, threads)));
            if (threads == 1) first = p.c;
            else if (std::memcmp(first.data(), p.c.data(), first.size() * sizeof(T)) != 0)
                fail_msg("%dx%dx%d: %d threads differ from 1", s[0], s[1], s[2], threads);
        }
    }
}

void test_sgemm_same_bits_for_any_thread_count(void**) { same_bits_for_any_thread_count<float>(); }

void test_workspace_cap(void**) {
    Problem<double> p = make_problem<double>('N', 'N', 70, 50, 40, 1.0, 0.5, 3);
    const std::vector<double> c0 = p.c;
    RunOptions o = kt::options(10, 2);
    o.workspace_cap_bytes = dgemm_workspace_bytes(70, 50, 40, 2, 10, kt::g_backend) - 1;
    assert_string_equal(amxblas::kernels::emulate_gemm(p.g, o), "memory:workspace-cap");
    assert_memory_equal(p.c.data(), c0.data(), c0.size() * sizeof(double));
    Problem<float> s = make_problem<float>('T', 'N', 70, 50, 40, 1.0f, 0.5f, 4);
    const std::vector<float> s0 = s.c;
    o.workspace_cap_bytes = sgemm_workspace_bytes(70, 50, 40, 2, kt::g_backend) - 1;
    assert_string_equal(amxblas::kernels::emulate_gemm(s.g, o), "memory:workspace-cap");
    assert_memory_equal(s.c.data(), s0.data(), s0.size() * sizeof(float));
    o.workspace_cap_bytes = sgemm_workspace_bytes(70, 50, 40, 2, kt::g_backend);  // exactly enough
    assert_null(amxblas::kernels::emulate_gemm(s.g, o));
    // 3 slices x 2 bytes per padded element of A and B (each slice buffer followed by a
    // 4160-byte stagger), plus the per-thread block scratch (accumulator and FP32 tiles: one
    // for sgemm, eight for dgemm's batched widening), for the reference set's 32 x 32 x 32
    // geometry (kernels_geometry_test checks another).
    assert_true(sgemm_workspace_bytes(256, 256, 256, 1) == 2 * 3 * (2 * 256 * 256 + 4160) + 256 * 256 * 4 + 4096);
    assert_true(dgemm_workspace_bytes(256, 256, 256, 1) == 2 * 6 * (2 * 256 * 256 + 4160) + 256 * 256 * 8 + 8 * 4096);
    // FP64: d slices for d(d+1)/2 products.
    assert_true(dgemm_workspace_bytes(256, 256, 256, 1, 36) == 2 * 8 * (2 * 256 * 256 + 4160) + 256 * 256 * 8 + 8 * 4096);
    assert_true(dgemm_workspace_bytes(256, 256, 256, 1, 6) == 2 * 3 * (2 * 256 * 256 + 4160) + 256 * 256 * 8 + 8 * 4096);
}

// The workspace does not grow with the call (kernels/common/chunk_plan.h, int8_chunk_plan.h):
// every route, the INT8 engine's counts included, square and skewed shapes up to 30000 and K
// up to 2^20, 1 to 112 threads, stays within the chunk budget (with the threads past the fourth
// on top). The plans of many threads are those of few (they once fell to 256 x 256 (BF16) and
// 32 x 32 x 64 (INT8) super-blocks at 112 threads).
void test_workspace_bounded(void**) {
    // The BF16 plan of an HPL update on many threads is the plan of few (it once fell to
    // 256 x 256 super-blocks at 112 threads).
    {
        const amxblas::kernels::ChunkShape shape{32, 32, 32, 256, 256};
        const amxblas::kernels::Chunking few = amxblas::kernels::plan_chunks(shape, 30000, 30000, 256, 6, 8, 4, 8);
        const amxblas::kernels::Chunking many = amxblas::kernels::plan_chunks(shape, 30000, 30000, 256, 6, 8, 112, 8);
        assert_true(std::size_t(many.mc) * many.nc >= std::size_t(few.mc) * few.nc);
    }
    for (int n : {2048, 4096}) {
        const amxblas::kernels::Int8ChunkPlan few = amxblas::kernels::plan_int8_chunks(n, n, n, 16, false, 4);
        for (int threads : {56, 112, 256}) {
            const amxblas::kernels::Int8ChunkPlan many = amxblas::kernels::plan_int8_chunks(n, n, n, 16, false, threads);
            assert_true(std::size_t(many.mc) * many.nc * many.kc >= std::size_t(few.mc) * few.nc * few.kc / 2);
        }
    }
    const int shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {30000, 30000, 30000}, {100000, 64, 64},
                             {64, 100000, 64},   {1024, 1024, 1 << 20}, {30000, 30000, 256}};
    for (const auto& sh : shapes)
        for (int threads : {1, 2, 64, 112}) {
            const int m = sh[0], n = sh[1], k = sh[2];
            const std::size_t bytes[] = {sgemm_workspace_bytes(m, n, k, threads), dgemm_workspace_bytes(m, n, k, threads, 6),
                                         dgemm_workspace_bytes(m, n, k, threads, 21), dgemm_workspace_bytes(m, n, k, threads, 36),
                                         dgemm_auto_workspace_bytes(m, n, k, threads), cgemm_workspace_bytes(m, n, k, threads),
                                         zgemm_workspace_bytes(m, n, k, threads)};
            // The budget holds the chunks and kBudgetThreads' own parts; more threads' parts (at
            // most an FP64 accumulator block and eight micro-tiles each) come on top.
            const std::size_t own = std::size_t(amxblas::kernels::kBlockM) * amxblas::kernels::kBlockN * 8 + 8 * 32 * 32 * 4 + 128;
            const std::size_t extra = std::size_t(std::max(0, threads - amxblas::kernels::kBudgetThreads)) * own;
            for (std::size_t b : bytes)
                if (b > amxblas::kernels::kChunkBudgetBytes + extra)
                    fail_msg("%d x %d x %d, %d threads: %zu bytes", m, n, k, threads, b);
            // INT8: the budget holds the chunks and kInt8BudgetParticipants' slots; more
            // participants' slots come on top (int8_chunk_plan.h).
            for (int moduli : {amxblas::kernels::kInt8MinModuli, 16, amxblas::kernels::kInt8MaxModuli}) {
                namespace kn = amxblas::kernels;
                const std::size_t b = kn::int8_dgemm_workspace_bytes(m, n, k, threads, moduli);
                const std::size_t slot = std::max(kn::int8_participant_bytes(moduli, false), kn::int8_participant_bytes(1, true));
                const std::size_t over = std::size_t(std::max(0, threads - kn::kInt8BudgetParticipants)) * slot;
                if (b > kn::kInt8BudgetBytes + over)
                    fail_msg("INT8 %d moduli, %d x %d x %d, %d threads: %zu bytes", moduli, m, n, k, threads, b);
            }
        }
}

// The process's address space in bytes (/proc/self/statm), or 0.
rlim_t address_space_bytes() {
    long pages = 0;
    std::ifstream statm("/proc/self/statm");
    return statm >> pages ? rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) : 0;
}

// A workspace the system refuses: the call forwards with memory:alloc-failed and leaves C as
// it was. In a child whose address space is capped a little above what it holds, so that the
// call's lease (some MiB, whatever the size: kernels/bf16/chunking.h) cannot be mapped.
// glibc serves a request from a free block its heap already holds without mapping anything,
// and the earlier tests leave such blocks behind (which, and how big, varies with what they
// allocated): so the child first takes every free block of 1 MiB or more, with the cap at
// what it holds, and only then gives it the 4 MiB above that.
void test_alloc_failure(void**) {
    const int n = 1024;
    Problem<float> s = make_problem<float>('N', 'N', n, n, n, 1.0f, 0.5f, 4);
    const std::vector<float> c0 = s.c;
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        workspace_pool_trim();
        struct rlimit lim{};
        if (getrlimit(RLIMIT_AS, &lim) != 0 || (lim.rlim_cur = address_space_bytes()) == 0 ||
            setrlimit(RLIMIT_AS, &lim) != 0)
            _exit(3);
        [[maybe_unused]] static void* volatile held[4096];  // volatile: GCC drops the mallocs of a result nobody reads
        int count = 0;
        for (std::size_t size = std::size_t(256) << 20; size >= (std::size_t(1) << 20); size /= 2)
            for (void* p; count < 4096 && (p = std::malloc(size)) != nullptr;) held[count++] = p;
        if ((lim.rlim_cur = address_space_bytes() + (rlim_t(4) << 20)) == 0 || setrlimit(RLIMIT_AS, &lim) != 0)
            _exit(3);
        const char* why = amxblas::kernels::emulate_gemm(s.g, kt::options(6, 1));
        const bool untouched = std::equal(c0.begin(), c0.end(), s.c.begin());
        _exit(why && std::string(why) == "memory:alloc-failed" && untouched ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

// Rows of op(A) and columns of op(B) 2^600 apart, subnormal entries and bits far below 2^-126:
// before the exact row/column scaling these were forwarded (domain:subnormal, too-large,
// slice-subnormal, underflow-risk); now they route, within each row's and column's tolerance.
void test_wide_ranges_route(void**) {
    for (int products : {10, 21, 36}) {
        Problem<double> p = make_problem<double>('N', 'T', 40, 33, 20, 1.0, 0.5, 5 + products);
        for (int l = 0; l < 20; ++l)
            for (int i = 0; i < 40; ++i) p.a[i + std::size_t(l) * p.g.lda] *= std::ldexp(1.0, 40 * (i % 15) - 300);
        for (int l = 0; l < 20; ++l)
            for (int j = 0; j < 33; ++j) p.b[j + std::size_t(l) * p.g.ldb] *= std::ldexp(1.0, 300 - 37 * (j % 17));
        p.a[3] = 0x1p-100 + 0x1p-140;
        p.a[7] = 4.9e-324;
        p.a[7 + p.g.lda] = -0x1p-1070;
        check_against_blas(p, products, 2);
    }
}

// A residual that shrinks faster than 9 bits a slice (entries 0.75 and 2^-50 + 2^-100: v = 0,
// -49, -100): the slice products span 2^-165, which unnormalised slices could not hold in FP32
// (this was domain:underflow-risk); normalised slices route it.
void test_fast_shrinking_residual_routes(void**) {
    Problem<double> p = make_problem<double>('N', 'T', 37, 41, 29, 1.0, 0.5, 12);
    for (auto* x : {&p.a, &p.b})
        for (std::size_t i = 0; i < x->size(); ++i) (*x)[i] = i % 3 == 0 ? 0.75 : 0x1p-50 + 0x1p-100;
    const OperandScans scans = scan_gemm_operands(p.g);  // the FP64 domain is "all finite"
    assert_false(scans.a.nonfinite || scans.b.nonfinite);
    for (int products : {6, 21}) check_against_blas(p, products, 2);
}

void test_beta_zero_ignores_nan(void**) {
    Problem<float> s = make_problem<float>('N', 'N', 45, 37, 29, -0.5f, 0.0f, 9);
    std::fill(s.c.begin(), s.c.end(), INFINITY);
    for (std::size_t i = 0; i < s.c.size(); i += 2) s.c[i] = NAN;
    assert_null(amxblas::kernels::emulate_gemm(s.g, kt::options()));
    for (int j = 0; j < 37; ++j)
        for (int i = 0; i < 45; ++i) assert_true(std::isfinite(s.c[i + std::size_t(j) * s.g.ldc]));
    Problem<double> d = make_problem<double>('T', 'N', 45, 37, 29, 1.0, 0.0, 9);
    assert_null(amxblas::kernels::emulate_gemm(d.g, kt::options(6)));
    for (int j = 0; j < 37; ++j)
        for (int i = 0; i < 45; ++i) assert_true(std::isfinite(d.c[i + std::size_t(j) * d.g.ldc]));
}

void test_bad_product_count(void**) {
    Problem<double> p = make_problem<double>('N', 'N', 4, 4, 4, 1.0, 0.0, 1);
    assert_string_equal(amxblas::kernels::emulate_gemm(p.g, kt::options(7)), "config:fp64-products");
}

}  // namespace

// Cut into chunks (kernels/bf16/chunking.h), a call gives the same bits as in one chunk:
// SGEMM, DGEMM fixed and auto, every op(), 2 threads. 64 x 64 x 256 chunks make several
// super-blocks (FP64: the facts pass first); 1024 x 1024 x 256 one super-block in K chunks
// (FP64 fixed: split with guessed scales, kept when the guess holds, with few_bits op(A)'s
// entries have 8 significant bits, so its slices end early and the guess fails: the facts
// pass, then the products again). Quick (under the AMX harness): smaller, op(B) = B only.
template <typename T>
void chunks_change_no_bit(int products) {
    const int m = kt::g_quick ? 100 : 200, n = kt::g_quick ? 70 : 140, k = kt::g_quick ? 300 : 530;
    for (int cut : {64, 1024})
        for (bool few_bits : {false, true})
            for (char ta : {'N', 'T'})
                for (char tb : {'N', 'T'}) {
                    if (kt::g_quick && tb == 'T') continue;
                    Problem<T> whole = make_problem<T>(ta, tb, m, n, k, T(1.5), T(0.25), 12);
                    if (few_bits)
                        for (T& x : whole.a) x = std::ldexp(std::round(std::ldexp(x, 7)), -7);
                    Problem<T> cut_p = whole;
                    cut_p.g.a = cut_p.a.data();
                    cut_p.g.b = cut_p.b.data();
                    cut_p.g.c = cut_p.c.data();
                    RunOptions o = kt::options(products, 2);
                    assert_null(amxblas::kernels::emulate_gemm(whole.g, o));
                    o.chunk_rows = o.chunk_cols = cut;
                    o.chunk_depth = 256;
                    assert_null(amxblas::kernels::emulate_gemm(cut_p.g, o));
                    if (std::memcmp(whole.c.data(), cut_p.c.data(), whole.c.size() * sizeof(T)) != 0)
                        fail_msg("%c%c products %d, cut %d%s: chunked result differs", ta, tb, products, cut,
                                 few_bits ? ", few bits" : "");
                }
}

void test_chunks_change_no_bit(void**) {
    chunks_change_no_bit<float>(6);
    chunks_change_no_bit<double>(6);
    chunks_change_no_bit<double>(21);
    chunks_change_no_bit<double>(kFp64Auto);
}

// A fixed count on several super-blocks guesses the split's scales and checks the guess on the
// first chunk of each operand (fp64_gemm.cc, settle_scales): the facts pass runs only where
// that chunk does not settle it, and either way the bits are those of the whole call (which
// runs the facts pass). The first chunks are op(A)'s rows 0..63 and op(B)'s columns 0..63 in
// K 0..255. Eight-bit entries (few_bits) end the slice chain early: in a first chunk they
// prove nothing about the rest (the facts pass runs); in the rest they do not change the
// scales the dense first chunk settled. K = 200 is one K chunk (each thread keeps one
// accumulator, Chunking::thread_acc), K = 530 three.
void guessed_scales_skip_the_facts_pass(int k) {
    const int m = kt::g_quick ? 100 : 200, n = kt::g_quick ? 70 : 140;
    const auto few_bits = [](double* x) { *x = std::ldexp(std::round(std::ldexp(*x, 7)), -7); };
    struct Case {
        const char* what;
        bool a_first, a_rest, b_first, b_rest;  // which parts get eight-bit entries
        int passes;                             // facts passes expected
    };
    const Case cases[] = {
        {"dense", false, false, false, false, 0},
        {"op(A) few bits", true, true, false, false, 1},
        {"op(A)'s first chunk few bits", true, false, false, false, 1},
        {"op(A) few bits past its first chunk", false, true, false, false, 0},
        {"op(B)'s first chunk few bits", false, false, true, false, 1},
        {"op(B) few bits past its first chunk", false, false, false, true, 0},
    };
    for (const Case& c : cases)
        for (int products : {6, 21}) {
            Problem<double> whole = make_problem<double>('N', 'N', m, n, k, 1.5, 0.25, 31);
            for (int l = 0; l < k; ++l) {
                const bool first_k = l < 256;
                for (int i = 0; i < m; ++i)
                    if (first_k && i < 64 ? c.a_first : c.a_rest) few_bits(&whole.a[i + std::size_t(l) * whole.g.lda]);
                for (int j = 0; j < n; ++j)
                    if (first_k && j < 64 ? c.b_first : c.b_rest) few_bits(&whole.b[l + std::size_t(j) * whole.g.ldb]);
            }
            Problem<double> cut = whole;
            cut.g.a = cut.a.data();
            cut.g.b = cut.b.data();
            cut.g.c = cut.c.data();
            PhaseTimes times;
            RunOptions o = kt::options(products, 2);
            assert_null(amxblas::kernels::emulate_gemm(whole.g, o));
            o.chunk_rows = o.chunk_cols = 64;
            o.chunk_depth = 256;
            o.times = &times;
            assert_null(amxblas::kernels::emulate_gemm(cut.g, o));
            if (std::memcmp(whole.c.data(), cut.c.data(), whole.c.size() * sizeof(double)) != 0)
                fail_msg("%s, products %d, K %d: chunked result differs", c.what, products, k);
            if (times.facts_passes != c.passes)
                fail_msg("%s, products %d, K %d: %d facts passes, expected %d", c.what, products, k, times.facts_passes,
                         c.passes);
        }
}

void test_guessed_scales_skip_the_facts_pass(void**) {
    guessed_scales_skip_the_facts_pass(200);
    guessed_scales_skip_the_facts_pass(kt::g_quick ? 300 : 530);
}

// Random DGEMMs in random chunks against the same calls whole, bit for bit: shapes, op(),
// leading dimensions, alpha and beta, every product count and auto, and data whose slice
// chains end early in places (an eight-bit corner of op(A), integers, sparse, wide and tiny
// exponents), so that the guessed scales hold on some first chunks and not on others, and a
// first chunk that ends its chain early can hide the rest's longer one. Quick: fewer calls.
void test_random_chunks_change_no_bit(void**) {
    kt::Rng rng(2026);
    const auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.uniform01(); };
    const auto pick = [&](int lo, int hi) { return lo + rng.below(hi - lo + 1); };
    const int products_list[] = {6, 10, 15, 21, 28, 36, kFp64Auto};
    const int calls = kt::g_quick ? 8 : 60;
    for (int t = 0; t < calls; ++t) {
        const int m = pick(1, 260), n = pick(1, 260), k = pick(1, 600);
        const char ta = pick(0, 1) ? 'N' : 'T', tb = pick(0, 1) ? 'N' : 'T';
        const int lda = (ta == 'N' ? m : k) + pick(0, 3), ldb = (tb == 'N' ? k : n) + pick(0, 3), ldc = m + pick(0, 3);
        std::vector<double> a(std::size_t(lda) * (ta == 'N' ? k : m)), b(std::size_t(ldb) * (tb == 'N' ? n : k));
        std::vector<double> c(std::size_t(ldc) * n);
        const int kind = pick(0, 5);
        for (std::vector<double>* x : {&a, &b})
            for (double& v : *x) {
                const double u = uniform(-1, 1);
                switch (kind) {
                    case 0: v = u; break;
                    case 1: v = pick(0, 9) == 0 ? std::ldexp(std::round(std::ldexp(u, 5)), -5) : u; break;
                    case 2: v = u * std::ldexp(1.0, pick(-40, 40)); break;
                    case 3: v = pick(0, 3) == 0 ? 0.0 : u * std::ldexp(1.0, pick(-1060, -1000)); break;
                    case 4: v = pick(0, 20) == 0 ? u : 0.0; break;
                    default: v = std::round(u * 100); break;
                }
            }
        if (pick(0, 2) == 0)  // eight-bit entries where the first chunks of op(A) may lie
            for (int i = 0; i < std::min(m, 192); ++i)
                for (int l = 0; l < std::min(k, 256); ++l) {
                    double& v = ta == 'N' ? a[i + std::size_t(l) * lda] : a[l + std::size_t(i) * lda];
                    v = std::ldexp(std::round(std::ldexp(v, 6)), -6);
                }
        for (double& v : c) v = uniform(-1, 1);
        std::vector<double> c_cut = c;
        const double alpha = pick(0, 1) ? 1.25 : -0.5, beta = pick(0, 3) == 0 ? 0.0 : 0.5;
        const GemmArgs<double> whole{ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc};
        GemmArgs<double> cut = whole;
        cut.c = c_cut.data();
        const int products = products_list[pick(0, 6)];
        RunOptions o = kt::options(products, 2);
        const char* why_whole = amxblas::kernels::emulate_gemm(whole, o);
        o.chunk_rows = 64 * pick(1, 3);
        o.chunk_cols = 64 * pick(1, 3);
        o.chunk_depth = 256;
        const char* why_cut = amxblas::kernels::emulate_gemm(cut, o);
        const bool same_reason = why_whole == why_cut || (why_whole && why_cut && std::strcmp(why_whole, why_cut) == 0);
        if (!same_reason || std::memcmp(c.data(), c_cut.data(), c.size() * sizeof(double)) != 0)
            fail_msg("call %d: %dx%dx%d %c%c, data kind %d, products %d: %s whole, %s in chunks%s", t, m, n, k, ta, tb,
                     kind, products, why_whole ? why_whole : "routed", why_cut ? why_cut : "routed",
                     same_reason ? ", results differ" : "");
    }
}

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgemm_shapes),
        cmocka_unit_test(test_dgemm_shapes),
        cmocka_unit_test(test_sgemm_big),
        cmocka_unit_test(test_dgemm_big),
        cmocka_unit_test(test_dgemm_bitwise_reproducible),
        cmocka_unit_test(test_sgemm_same_bits_for_any_thread_count),
        cmocka_unit_test(test_workspace_cap),
        cmocka_unit_test(test_workspace_bounded),
        cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_chunks_change_no_bit),
        cmocka_unit_test(test_guessed_scales_skip_the_facts_pass),
        cmocka_unit_test(test_random_chunks_change_no_bit),
        cmocka_unit_test(test_wide_ranges_route),
        cmocka_unit_test(test_fast_shrinking_residual_routes),
        cmocka_unit_test(test_beta_zero_ignores_nan),
        cmocka_unit_test(test_bad_product_count),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

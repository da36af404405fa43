// AMXBLAS_FP64_PRODUCTS=auto: the certificate's promise, entry by entry, against an exact
// reference on inputs of every shape the certificate must handle; the decision and the result
// bitwise identical across backends and thread counts; and the uncertifiable case forwarded.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/driver/routed_gemm.h"
#include "kernels/certificate/fp64_certificate.h"
#include "kernels/certificate/fp64_structural_zeros.h"
#include "tests/kernels/fp64_cases.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

using kt::Case;
using kt::exact_entry;
using kt::make_case;

// Runs auto and checks |C - AB| <= tol * gamma_K * (|A||B|)_ij for every entry (alpha = 1,
// beta = 0: C is the product scaled back, exactly). Returns the report.
Fp64AutoReport check_certified(Case& cs, int threads, double tol = 1) {
    const Fp64AutoReport rep = kt::run_within_bound(cs, kt::options(kFp64Auto, threads), tol);
    assert_true(rep.products >= 6 && rep.products <= 36);
    assert_true(rep.margin >= 1);
    return rep;
}

void test_uniform_certified(void**) {
    for (int k : {2, 7, 64, 300}) {
        Case cs = make_case('N', 'T', 37, 45, k, 10 + k);
        const Fp64AutoReport r = check_certified(cs, 2);
        if (k >= 64) {
            assert_true(r.products <= 21);
            assert_int_equal(r.repaired, 0);
        }
    }
}

void test_log_uniform_certified(void**) {
    Case cs = kt::log_uniform_case();
    check_certified(cs, 1);
}

// Rows of A and columns of B 2^600 apart, subnormals, one zero row and column, and values
// with bits far below 2^-126.
void test_wide_ranges_certified(void**) {
    Case cs = kt::wide_range_case();
    cs.a[3 + 33] = 0x1p-100 + 0x1p-140;
    check_certified(cs, 2);
}

// Cancellation: (AB)_ij is tiny against (|A||B|)_ij; the bound is relative to the latter.
void test_cancellation_certified(void**) {
    Case cs = make_case('N', 'N', 40, 40, 128, 21);
    for (int j = 0; j < 40; ++j)
        for (int l = 0; l < 64; ++l) cs.b[l + 64 + std::size_t(j) * 128] = -cs.b[l + std::size_t(j) * 128] * (1 + 0x1p-30);
    for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 40; ++i) cs.a[i + std::size_t(l + 64) * 40] = cs.a[i + std::size_t(l) * 40];
    check_certified(cs, 2);
}

// K = 1: DGEMM's bound is one rounding, u |a b|; truncated slices cannot promise that, so every
// entry fails and the call is forwarded, C untouched. A looser tolerance certifies it.
void test_uncertifiable_forwarded(void**) {
    Case cs = make_case('N', 'N', 20, 20, 1, 3);
    std::fill(cs.c.begin(), cs.c.end(), 2.5);
    cs.g.beta = 1;
    RunOptions o = kt::options(kFp64Auto, 2);
    assert_string_equal(amxblas::kernels::emulate_gemm(cs.g, o), "accuracy:uncertified");
    for (double x : cs.c) assert_true(x == 2.5);
    cs.g.beta = 0;
    check_certified(cs, 2, 4);
}

// K = 1 is decided before the split from the nonzero counts (kernels/driver/routed_gemm.cc,
// k1_uncertified): the same verdict as the full certificate, for dense operands, for operands
// with so few nonzero rows and columns that the failing entries can be repaired, transposed,
// and with tol < 1.
void test_k1_shortcut_matches_certificate(void**) {
    int routed = 0, forwarded = 0;
    for (int variant = 0; variant < 12; ++variant) {
        const char ta = variant % 2 ? 'T' : 'N', tb = variant % 3 ? 'N' : 'T';
        Case cs = make_case(ta, tb, 20, 24, 1, 100 + variant);
        const int keep_rows = variant % 4 == 0 ? 20 : 1 + variant % 4, keep_cols = variant % 4 == 0 ? 24 : 2 + variant;
        // op(A)(i, 0) and op(B)(0, j): both are contiguous or strided by the leading dimension.
        for (int i = keep_rows; i < 20; ++i) cs.a[ta == 'N' ? i : std::size_t(i) * cs.g.lda] = 0;
        for (int j = keep_cols; j < 24; ++j) cs.b[tb == 'N' ? std::size_t(j) * cs.g.ldb : j] = 0;
        RunOptions o = kt::options(kFp64Auto, 2);
        o.fp64_tol = variant >= 8 ? 0.5 : 1;
        PreparedDgemm p;
        assert_null(prepare_dgemm(cs.g, o, &p));
        amxblas::kernels::Fp64Certificate cert;
        const std::vector<double> lower = kt::whole_lower(&p, 20, 24);
        const bool ok = amxblas::kernels::fp64_certify(p.a, p.b, 1, lower.data(), 20, o.fp64_tol, 3, 2, &cert);
        const bool full_forwards = !ok || cert.failing > amxblas::kernels::fp64_repair_limit(20, 24);
        const char* why = amxblas::kernels::emulate_gemm(cs.g, o);
        assert_true((why != nullptr) == full_forwards);
        if (why) assert_string_equal(why, "accuracy:uncertified");
        (why ? forwarded : routed)++;
    }
    assert_true(routed > 0 && forwarded > 0);  // both verdicts were compared
}

// The decision and the result: bitwise the same on every backend and thread count.
void test_auto_bitwise_reproducible(void**) {
    Case cs = make_case('T', 'N', kt::g_quick ? 64 : 150, kt::g_quick ? 40 : 130, kt::g_quick ? 300 : 530, 41);
    std::vector<double> first;
    Fp64AutoReport r0;
    for (int run = 0; run < 3; ++run) {
        RunOptions o = kt::options(kFp64Auto, run == 1 ? 2 : 1);
        if (run == 2) o.backend = Backend::reference, o.threads = 2;
        Fp64AutoReport rep;
        o.fp64_report = &rep;
        std::fill(cs.c.begin(), cs.c.end(), NAN);
        assert_null(amxblas::kernels::emulate_gemm(cs.g, o));
        if (run == 0) {
            first = cs.c;
            r0 = rep;
        } else {
            if (std::memcmp(first.data(), cs.c.data(), first.size() * sizeof(double)) != 0)
                fail_msg("auto run %d differs (%s, %d threads)", run, backend_name(o.backend), o.threads);
            assert_int_equal(rep.products, r0.products);
            assert_true(rep.margin == r0.margin);
        }
    }
}


// Netlib's testers zero column n/2 of each matrix but for its diagonal entry; with K = N the
// product then has a zero column but for one entry. Those entries have no lower bound of |A||B|
// above 0, so before they were known as zero by structure they passed at no depth: the depth
// went to 8 and, 8 failing entries being more than 1/16 of C, the call was forwarded. Now it
// routes, repairs nothing, and leaves the zeros exact; every transpose pair.
void test_structural_zeros_routed(void**) {
    for (int variant = 0; variant < 4; ++variant) {
        const char ta = variant & 1 ? 'T' : 'N', tb = variant & 2 ? 'T' : 'N';
        const int m = 9, n = 9, k = 9, z = 4;  // netlib's zeroed index n/2 (0-based here)
        Case cs = make_case(ta, tb, m, n, k, 300 + variant);
        // op(A)(i, z) = 0 for i != z, op(B)(z, j)... netlib zeroes B's column z: op(B)(l, z) = 0
        // for l != z. Term l of entry (i, z) is op(A)(i, l) op(B)(l, z): zero unless l = z,
        // where op(A)(i, z) = 0 unless i = z.
        for (int i = 0; i < m; ++i)
            if (i != z) cs.a[ta == 'N' ? i + std::size_t(z) * m : z + std::size_t(i) * k] = 0;
        for (int l = 0; l < k; ++l)
            if (l != z) cs.b[tb == 'N' ? l + std::size_t(z) * k : z + std::size_t(l) * n] = 0;
        const Fp64AutoReport rep = check_certified(cs, variant % 2 + 1);
        assert_int_equal(rep.repaired, 0);
        assert_true(rep.products < 36);
        for (int i = 0; i < m; ++i)
            if (i != z) assert_true(cs.c[i + std::size_t(z) * m] == 0);
    }
}

// An entry whose lower bound is 0 without being zero by structure: row 0 of A is (1, 2^-20, 1,
// ...) and column 0 of B is (0, 1, 0, ...), so |Z_0^A||Z_0^B| is 0 there (2^-20 is below slice
// 0's grid) while the exact entry is 2^-20. It must not pass as exact: it is repaired.
void test_near_structural_zero_repaired(void**) {
    Case cs = make_case('N', 'N', 30, 30, 8, 55);
    for (int l = 0; l < 8; ++l) cs.a[std::size_t(l) * 30] = l == 1 ? 0x1p-20 : 1;
    for (int l = 0; l < 8; ++l) cs.b[l] = l == 1 ? 1 : 0;
    amxblas::kernels::StructuralZeros<double> zeros(cs.g);
    assert_false(zeros(0, 0));
    const Fp64AutoReport rep = check_certified(cs, 2);
    assert_true(rep.repaired >= 1);
    assert_true(cs.c[0] == 0x1p-20);
}

// Block-diagonal and banded operands: the entries outside the blocks (the band) are zero by
// structure, M N / 2 and more of them, too many to check term by term within the read budget
// (they were forwarded). The nonzero spans of the rows of op(A) and the columns of op(B) do not
// meet there, which answers them at no cost: the calls route and leave those entries exactly
// zero, every transpose pair. (The banded product's edge entries are sums of one to three
// terms, which the certificate may repair; the block-diagonal one repairs nothing.)
void test_block_diagonal_and_banded_routed(void**) {
    const int m = 64, n = 64, k = 64;
    for (int shape = 0; shape < 2; ++shape)
        for (int variant = 0; variant < 4; ++variant) {
            const char ta = variant & 1 ? 'T' : 'N', tb = variant & 2 ? 'T' : 'N';
            // shape 0: two diagonal blocks of 32; shape 1: bandwidth 3 in both operands.
            const auto kept = [shape](int r, int c, int rows, int cols) {
                return shape == 0 ? (r < rows / 2) == (c < cols / 2) : std::abs(r - c) <= 3;
            };
            Case cs = make_case(ta, tb, m, n, k, 400 + 4 * shape + variant);
            for (int i = 0; i < m; ++i)
                for (int l = 0; l < k; ++l)
                    if (!kept(i, l, m, k)) cs.a[ta == 'N' ? i + std::size_t(l) * m : l + std::size_t(i) * k] = 0;
            for (int l = 0; l < k; ++l)
                for (int j = 0; j < n; ++j)
                    if (!kept(l, j, k, n)) cs.b[tb == 'N' ? l + std::size_t(j) * k : j + std::size_t(l) * n] = 0;
            amxblas::kernels::StructuralZeros<double> zeros(cs.g);
            int yes = 0, expected = 0;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                    const bool structural = shape == 0 ? (i < m / 2) != (j < n / 2) : std::abs(i - j) > 6;
                    expected += structural;
                    yes += structural && zeros(i, j);
                }
            assert_int_equal(yes, expected);  // every one, whatever the budget
            const Fp64AutoReport rep = check_certified(cs, 2);  // routed, and within DGEMM's bound
            if (shape == 0) assert_int_equal(rep.repaired, 0);
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i)
                    if (shape == 0 ? (i < m / 2) != (j < n / 2) : std::abs(i - j) > 6)
                        assert_true(cs.c[i + std::size_t(j) * m] == 0);
        }
}

// The term-by-term check answers only for entries really zero by structure, and within its read
// budget (M K + K N + M N, each check charged the overlap of the two spans it reads). Operands
// whose nonzeros interleave by parity (op(A)(i, l) != 0 only where l = i mod 2, op(B)(l, j) only
// where l != j mod 2) have spans that all meet and M N / 2 entries zero by structure: more than
// the budget lets the test check at K = 64, so the call is forwarded (a known limit).
void test_structural_zero_budget(void**) {
    const int m = 64, n = 64, k = 64;
    Case cs = make_case('N', 'N', m, n, k, 8);
    for (int l = 0; l < k; ++l)
        for (int i = 0; i < m; ++i)
            if (l % 2 != i % 2) cs.a[i + std::size_t(l) * m] = 0;
    for (int j = 0; j < n; ++j)
        for (int l = 0; l < k; ++l)
            if (l % 2 == j % 2) cs.b[l + std::size_t(j) * k] = 0;
    amxblas::kernels::StructuralZeros<double> zeros(cs.g), other(cs.g);
    int yes = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            if (i % 2 == j % 2)
                yes += zeros(i, j);
            else
                assert_false(other(i, j));  // term l = i mod 2 has two nonzero factors
        }
    // A row's span is 0..62 (i even) or 1..63, a column's 1..63 (j even) or 0..62: each entry
    // zero by structure overlaps on 1..62, 62 reads.
    assert_int_equal(yes, (m * k + k * n + m * n) / 62);
    RunOptions o = kt::options(kFp64Auto, 2);
    assert_string_equal(amxblas::kernels::emulate_gemm(cs.g, o), "accuracy:uncertified");
}

// BF16's auto splits kFp64AutoFirstDepth (6) slices first and all eight only where entries fail
// at the depth it picks (RunOptions::fp64_auto_depth, kernels/driver/routed_gemm.cc): every
// call's verdict, products, repairs and result are those of eight slices split from the start.
// The margin may differ in its last bits only: the column bound bbar_j takes the slices split
// (docs/fp64-certificate.md, Section 3). The cases cover both paths (products <= 21 without the
// second split, 28 or 36 or repairs with it), a forward after it, the structural-zero test asked
// twice (its budget spent once), a call in several chunks, K = 1, and a call large enough to be
// sampled.
void test_lazy_split_changes_no_decision(void**) {
    std::vector<Case> cases;
    cases.push_back(make_case('N', 'T', 37, 45, 300, 310));
    cases.push_back(kt::log_uniform_case());
    cases.push_back(kt::wide_range_case());
    Case cancel = make_case('N', 'N', 40, 40, 128, 21);
    for (int j = 0; j < 40; ++j)
        for (int l = 0; l < 64; ++l)
            cancel.b[l + 64 + std::size_t(j) * 128] = -cancel.b[l + std::size_t(j) * 128] * (1 + 0x1p-30);
    for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 40; ++i) cancel.a[i + std::size_t(l + 64) * 40] = cancel.a[i + std::size_t(l) * 40];
    cases.push_back(std::move(cancel));
    Case repair = make_case('N', 'N', 30, 30, 8, 55);  // test_near_structural_zero_repaired's
    for (int l = 0; l < 8; ++l) repair.a[std::size_t(l) * 30] = l == 1 ? 0x1p-20 : 1;
    for (int l = 0; l < 8; ++l) repair.b[l] = l == 1 ? 1 : 0;
    cases.push_back(std::move(repair));
    Case netlib = make_case('T', 'N', 9, 9, 9, 301);  // test_structural_zeros_routed's
    for (int i = 0; i < 9; ++i)
        if (i != 4) netlib.a[4 + std::size_t(i) * 9] = 0;
    for (int l = 0; l < 9; ++l)
        if (l != 4) netlib.b[l + 4 * 9] = 0;
    cases.push_back(std::move(netlib));
    Case parity = make_case('N', 'N', 64, 64, 64, 8);  // test_structural_zero_budget's: forwarded
    for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 64; ++i) {
            if (l % 2 != i % 2) parity.a[i + std::size_t(l) * 64] = 0;
            if (l % 2 == i % 2) parity.b[l + std::size_t(i) * 64] = 0;
        }
    cases.push_back(std::move(parity));
    // 64 entries zero by structure whose checks take most of the read budget (the parity
    // pattern on 16 rows and columns), and entry (40, 40), whose lower bound is 0 without being
    // zero (as in `repair`): it fails at every depth, so the lazy call splits again and decides
    // again; asked a second time, the budget would prove only some of the zeros.
    Case budget = make_case('N', 'N', 64, 64, 64, 12);
    for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 16; ++i) {
            if (l % 2 != i % 2) budget.a[i + std::size_t(l) * 64] = 0;
            if (l % 2 == i % 2) budget.b[l + std::size_t(i) * 64] = 0;
        }
    for (int l = 0; l < 64; ++l) {
        budget.a[40 + std::size_t(l) * 64] = l == 1 ? 0x1p-20 : 1;
        budget.b[l + 40 * 64] = l == 1 ? 1 : 0;
    }
    cases.push_back(std::move(budget));
    cases.push_back(make_case('N', 'N', 20, 20, 1, 3));
    // Large enough to be sampled (gemm_sample.h), log-uniform: its sample needs eight slices,
    // so the call starts at eight (sample_uncertified's depth).
    Case sampled = make_case('N', 'N', 256, 256, 256, 91);
    amxblas::test::Rng spread(6);
    for (auto* x : {&sampled.a, &sampled.b})
        for (double& v : *x) v = std::ldexp(v, int(std::lround(spread.uniform() * 12)));
    cases.push_back(std::move(sampled));
    int lazy = 0, deepened = 0, forwarded = 0;
    for (std::size_t q = 0; q < cases.size() + 1; ++q) {
        const bool chunked = q == cases.size();  // the log-uniform case again, in chunks
        Case& cs = cases[chunked ? 1 : q];
        const double tol = cs.g.k == 1 ? 4 : 1;
        std::vector<double> c[2];
        Fp64AutoReport rep[2];
        const char* why[2];
        for (int deep = 0; deep < 2; ++deep) {
            RunOptions o = kt::options(kFp64Auto, 2);
            o.fp64_auto_depth = deep ? kFp64Slices : kFp64AutoFirstDepth;
            o.fp64_tol = tol;
            o.fp64_report = &rep[deep];
            if (chunked) o.chunk_rows = o.chunk_cols = 32, o.chunk_depth = 64;
            std::fill(cs.c.begin(), cs.c.end(), NAN);
            why[deep] = amxblas::kernels::emulate_gemm(cs.g, o);
            c[deep] = cs.c;
        }
        assert_true((why[0] == nullptr) == (why[1] == nullptr));
        if (why[0]) {
            assert_string_equal(why[0], why[1]);
            ++forwarded;
            continue;
        }
        if (std::memcmp(c[0].data(), c[1].data(), c[0].size() * sizeof(double)) != 0)
            fail_msg("case %zu: the lazy split changed C (products %d, %d)", q, rep[0].products, rep[1].products);
        assert_int_equal(rep[0].products, rep[1].products);
        assert_int_equal(rep[0].repaired, rep[1].repaired);
        assert_true(std::fabs(rep[0].margin - rep[1].margin) <= 0x1p-40 * rep[1].margin);
        (rep[0].products > fp64_products_of_depth(kFp64AutoFirstDepth) || rep[0].repaired > 0 ? deepened : lazy)++;
    }
    assert_true(lazy > 0 && deepened > 0 && forwarded > 0);  // every path was compared
}

}  // namespace

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_certified),
        cmocka_unit_test(test_log_uniform_certified),
        cmocka_unit_test(test_wide_ranges_certified),
        cmocka_unit_test(test_cancellation_certified),
        cmocka_unit_test(test_uncertifiable_forwarded),
        cmocka_unit_test(test_k1_shortcut_matches_certificate),
        cmocka_unit_test(test_auto_bitwise_reproducible),
        cmocka_unit_test(test_structural_zeros_routed),
        cmocka_unit_test(test_near_structural_zero_repaired),
        cmocka_unit_test(test_block_diagonal_and_banded_routed),
        cmocka_unit_test(test_structural_zero_budget),
        cmocka_unit_test(test_lazy_split_changes_no_decision),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// The per-entry error certificate of the FP64 emulation (AMXBLAS_FP64_PRODUCTS=auto).
//
// Everything here is in the scaled units of the split (pack.h): Ahat = op(A) with row i
// multiplied by 2^-e_i, Bhat = op(B) with column j multiplied by 2^-f_j, so that C = alpha *
// 2^(e_i + f_j) * (Ahat Bhat)_ij + beta * C and a relative bound on (Ahat Bhat)_ij is the
// same relative bound on (op(A) op(B))_ij. With d slices per operand the driver computes
// Chat_ij, the FP64 sum (smallest product first) of the exact FP32 panel sums of the
// products Z^A_p Z^B_q, p + q < d. The certificate passes entry (i, j) at depth d when
//
//   (tau_ij(d) + E_ij(d) + eta) * (1 + 2^-30)  <=  tol * gamma_K * Lo_ij * (1 - 2^-30)
//
// with tau the truncation bound, E the FP64 accumulation bound, eta an underflow allowance,
// gamma_K = K u / (1 - K u), u = 2^-53, and Lo_ij a proven lower bound of (|Ahat||Bhat|)_ij.
// Then |Chat_ij - (Ahat Bhat)_ij| <= tol * gamma_K * (|Ahat||Bhat|)_ij: the bound the reference
// BLAS's error analysis gives DGEMM's inner products (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., Eq. (3.5)). The proof is docs/fp64-certificate.md; the
// names below follow it.
//
// Functions of what the split and one extra BF16 product found, and, for the rare entries
// whose lower bound is 0, of exact comparisons of the operands with zero (zero_by_structure),
// so the decision is the same on every backend and thread count: every input is exact or
// computed in a fixed order (kernels/bf16/emulated_gemm.h, prepare_dgemm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <functional>
#include <vector>

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

struct Fp64Certificate {
    int depth = 0;        // d picked (3..D); 0 when no depth certifies enough entries
    long failing = 0;     // entries not certified at `depth` (to repair)
    double margin = 0;    // min over certified entries of rhs / lhs at `depth` (>= 1)
    std::vector<std::size_t> fail_at;  // i + j * m of each failing entry, ascending
};

// How the certificate learns which entries are zero by structure (fp64_structural_zeros.h),
// asked only for entries whose lower bound is 0: by_spans may be asked from any thread in any
// order; by_terms, for the entries by_spans did not prove, is asked from one thread in index
// order (its answers depend on the order). Either may be empty (never proves).
struct StructuralTest {
    std::function<bool(int, int)> by_spans, by_terms;
};

// The certificate, block by block: the driver computes the lower bounds lhat chunk by chunk
// (kernels/bf16/emulated_gemm.h, lower_bound_blocks) and never holds all of them. Two passes
// over lhat: add_block for every block (the per-depth counts: each entry's smallest passing
// depth, the failing entries and the margin at each depth), decide, then, only when some
// entry fails at the depth picked, failing_in for every block. The same decisions, entry for
// entry, as one pass over the whole matrix: every test is elementwise, and the counts and
// minima do not depend on the order the blocks come in.
class Fp64BlockCertificate {
public:
    static constexpr int kSlab = 256;  // rows tested at a time (stack arrays)
    // a, b: what prepare_dgemm found (Fp64SplitFacts, with norms; zero may be nullptr).
    // gamma_terms: the n of the bound gamma_n that tol multiplies; 0 means k (DGEMM's inner
    // products). ZGEMM passes K + 1 for its real GEMM of depth k = 2K: per part, the bound of a
    // complex inner product of length K in real arithmetic (docs/fp64-certificate.md, Section 9).
    // Returns false when the inputs leave the certificate's assumptions (K u >= 2^-10). Begun
    // again, it forgets the blocks it was given.
    bool begin(const Fp64SplitFacts& a, const Fp64SplitFacts& b, int k, double tol, int min_depth, int threads,
               int gamma_terms, StructuralTest structural);
    // Pass 1 over the entries (i0 .. i0 + rows - 1, j0 .. j0 + cols - 1), lhat(i0 + i, j0 + j) =
    // lower[i * rs + j * cs]: the FP64 sum, over the K panels in order, of the exact panel sums
    // of |Z^A_0| |Z^B_0| / 2^(v_A(0) + v_B(0)) (one BF16 product). Any thread, blocks disjoint.
    void add_block(int i0, int j0, int rows, int cols, const double* lower, std::size_t rs, std::size_t cs);
    // After every block: the depth, the number of failing entries and the margin (no fail_at).
    void decide(Fp64Certificate* out);
    // Pass 2, after decide: appends i + j * m of the block's entries that fail at the depth
    // picked (the caller sorts the union). Any thread.
    void failing_in(int i0, int j0, int rows, int cols, const double* lower, std::size_t rs, std::size_t cs,
                    std::vector<std::size_t>* out) const;

private:
    struct Pending {
        std::size_t at;  // i + j * m
        unsigned pass;   // bit d: passes at depth d on its bound alone
    };
    template <typename PendingFn, typename Body>
    void for_each_slab(int i0, int j0, int rows, int cols, const double* lower, std::size_t rs, std::size_t cs,
                       PendingFn&& pending, Body&& body) const;

    Fp64SplitFacts a_, b_;
    StructuralTest structural_;
    int min_depth_ = 3, dmax_ = 0, depth_ = 0;
    double l_up_ = 1, s00_ = 0, delta_a_ = 0, delta_b_ = 0, tg_ = 0;
    double c1_[kFp64Slices + 1] = {};
    std::vector<double> row_part_, col_part_, a0_, b0_, row_inf_;
    std::mutex merge_;  // the totals below, merged block by block
    std::int64_t deepest_ = 0, nowhere_ = 0;
    std::int64_t failing_[kFp64Slices + 1] = {};
    double margin_[kFp64Slices + 1] = {};
    std::vector<Pending> pending_;        // lower bound 0, spans meeting: for decide
    std::vector<std::size_t> by_terms_;   // proved zero term by term, ascending
};

// The whole-matrix form (the tests' entry point): lhat[i + j * ldl] for every entry, both
// passes, out->fail_at filled (ascending). zero_by_structure, if given, is asked in index order
// for the entries whose lhat is 0 (Section 10); entries it proves pass.
bool fp64_certify(const Fp64SplitFacts& a, const Fp64SplitFacts& b, int k, const double* lhat, int ldl, double tol,
                  int min_depth, int threads, Fp64Certificate* out, int gamma_terms = 0,
                  const std::function<bool(int, int)>& zero_by_structure = {});

// The most entries an auto call may repair (recompute in FP64) instead of being forwarded:
// 1/16 of C, so the scalar repairs cost less than the routed products, but at least one entry
// (a small C, fewer than 32 entries, would otherwise allow none: netlib's 5 x 9 calls with one
// weak entry were forwarded), and fewer than half of C (a 1 x 1 or 1 x 2 C repaired whole
// would be DGEMM under another name).
long fp64_repair_limit(int m, int n);

}  // namespace amxblas::kernels

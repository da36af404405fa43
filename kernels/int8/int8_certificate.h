// The per-entry certificate of the INT8 engine (docs/fp64-int8.md, Section 4): from the
// operands' facts (int8_facts.h) and one INT8 product of magnitudes, it picks the fewest
// moduli at which every entry's error is provably within tol * gamma_n * (|op(A)||op(B)|)_ij,
// before any residue is split: the bound does not depend on the products' results.
//
// Entry (i, j) at count c (halves h_A, h_B of the basis's range, int8_pack.h) is certified when
//     (1 + u) (T_ij + eta_ij) (1 + 2^-30) <= (tol gamma_n - u) L_ij (1 - 2^-30),
// or T_ij = eta_ij = 0 and tol gamma_n >= u (then the only error is the final rounding), with,
// in units of 2^(e_i + f_j),
//     T_ij = F^A_i 2^(nu_i - h_A) n1^B_j + F^B_j 2^(nu_j - h_B) n1^A_i + F^A_i F^B_j K 2^(nu_i + nu_j - h_A - h_B),
//     L_ij = lhat_ij 2^-14 (lhat: the exact INT8 product of the magnitude digits),
// F the "some entry of the row (column) is not an integer once scaled" flags, eta the
// underflow term. Entries with lhat = 0 ask the structural-zero test (fp64_structural_zeros.h),
// which the INT8 engine also computes exactly.
//
// Past the fewest moduli that certify, auto adds moduli (up to kInt8MaxModuli) until every
// certified entry also meets the test with u in place of tol gamma_n - u: its representation
// error is then below one unit roundoff of (|A||B|)_ij, and the result as accurate as DGEMM's
// usual actual error, not only within its worst-case bound (issue 24's target: no larger error
// than OpenBLAS's DGEMM). This costs a modulus or two: 14 -> 15 on uniform data, N = 512.
//
// Block by block, as Fp64BlockCertificate: add_block for every block of lhat, decide, then
// failing_in only when some entry fails at the count picked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/certificate/fp64_certificate.h"
#include "kernels/int8/crt_basis.h"
#include "kernels/int8/int8_facts.h"

namespace amxblas::kernels {

struct Int8Decision {
    int count = 0;       // moduli picked; 0 when none certifies enough entries
    long failing = 0;    // entries not certified at `count` (to repair)
    double margin = 0;   // min over certified entries of rhs / lhs at `count`
    // The fewest moduli of those considered at which no entry fails, where tol gamma_n >= u
    // (then every count below it fails some entry); 0: none, tol gamma_n < u, or not known
    // (a pruned certificate's, Int8BlockCertificate::begin).
    int first_clean = 0;
};

class Int8BlockCertificate {
public:
    // gamma_terms: the n of gamma_n (DGEMM: K; ZGEMM's real GEMM: K + 1). Counts from
    // min_count to kInt8MaxModuli are considered (those whose halves fit sqrt(K), int8_halves).
    // False when none does.
    // A max_count below kInt8MaxModuli considers fewer counts (see settled()). prune: for a
    // call that is settled() or certified again: once some block finds an entry failing or
    // loose at a count, the other blocks skip that count. Then the tallies are exact only
    // where they are 0, which is all decide() reads of a settled certificate.
    bool begin(const Int8OperandFacts& a, const Int8OperandFacts& b, int gamma_terms, double tol, int min_count,
               StructuralTest structural, int max_count = kInt8MaxModuli, bool prune = false);
    // lhat(i0 + i, j0 + j) = lower[i * ld + j]. Any thread, blocks disjoint.
    void add_block(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld);
    // The same counts, margins and pending entries, entry by entry through passes(): what
    // add_block's vectorized block-row test must equal (kernels_int8_test), not for the engine.
    void add_block_per_entry(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld);
    // What the blocks added so far count at count c: entries failing, certified but not tight,
    // and the least margin (the tests compare the two ways of adding blocks with it).
    void tally(int c, std::int64_t* failing, std::int64_t* loose, double* margin) const {
        *failing = failing_[c];
        *loose = loose_[c];
        *margin = margin_[c];
    }
    void decide(Int8Decision* out);
    // After the blocks: whether every entry passes, tightly, at the largest count considered,
    // with tol gamma_n >= u. Then decide() picks what it would with the counts above considered
    // too (an entry that passes tightly at a count does at every larger one: its lhs only
    // shrinks), and failing_everywhere() is 0 either way; and with the counts below min_count
    // too, where each of them is known to fail some entry.
    bool settled();
    // After begin: whether entry (i, j) fails at every count even with L_ij replaced by
    // `upper`, an upper bound of (|op(A)||op(B)|)_ij in units of 2^(e_i + f_j). The test is
    // monotone in L, so such an entry fails whatever its lhat (kernels/driver/sample_screen.h).
    bool fails_at_every_count(int i, int j, double upper) const;
    // The second look at entries failing at every count (int8_refine.h), between the blocks and
    // decide: how many entries the largest count fails (at least those failing everywhere);
    // the block's entries failing at every count (i + j m); and retest, which counts each
    // such entry at[q] again with lower[q] <= (|op(A)||op(B)|)_ij (units of 2^(e_i + f_j)) in
    // place of L_ij, for decide and failing_in.
    long failing_everywhere();
    void failing_everywhere_in(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld,
                               std::vector<std::size_t>* out) const;
    void retest(const std::vector<std::size_t>& at, const std::vector<double>& lower);
    // After decide: appends i + j * m of the block's entries failing at the count picked.
    void failing_in(int i0, int j0, int rows, int cols, const double* lower, std::size_t ld,
                    std::vector<std::size_t>* out) const;

private:
    // Bit c of the result: entry (i, j) passes at count c on its bound; *tight bit c whether it
    // also passes against u (see above). margin (when not null): the running minima, per
    // count, of the margins rhs / lhs of the entries that pass (lhs = 0 leaves them).
    unsigned passes(int i, int j, double lhat, double* margin, unsigned* tight) const;
    // Entry (i, j)'s count-free factors of T, and its lhs at a count (passes()'s arithmetic).
    struct EntryBound {
        int thr_a = 0, thr_b = 0, eta_above = 0;
        double x = 0, y = 0, z = 0, eta = 0;
        double lhs(const Int8BlockCertificate& cert, int c) const;
    };
    EntryBound entry_bound(int i, int j) const;
    // What add_block gathers of a block before it merges it.
    struct BlockTally {
        std::int64_t failing[kInt8MaxModuli + 1] = {};
        std::int64_t loose[kInt8MaxModuli + 1] = {};
        double margin[kInt8MaxModuli + 1];
        std::vector<std::size_t> pending;
    };
    void count_entry(int i, int j, double lhat, BlockTally* t) const;
    void merge(const BlockTally& t);
    // The term-by-term test of the entries whose lhat is 0 (once, before the counts are read).
    void resolve_pending();
    // Entry (i, j)'s passing counts and tight ones as decide counted it: retested, zero by
    // structure, or passes() on lhat.
    unsigned bits_of(int i, int j, double lhat, unsigned* tight) const;

    const Int8OperandFacts* a_ = nullptr;
    const Int8OperandFacts* b_ = nullptr;
    StructuralTest structural_;
    int min_count_ = 0, max_count_ = 0, count_ = 0, k_ = 0;
    double rhs_factor_ = 0;  // (tol gamma_n - u) 2^-14 (1 - 2^-30)
    double tight_factor_ = 0;  // u 2^-14 (1 - 2^-30)
    bool exact_passes_ = false;  // tol gamma_n >= u
    bool prune_ = false;         // begin()'s prune
    std::atomic<bool> bad_[kInt8MaxModuli + 1] = {};  // prune: some entry fails or is loose at c
    int half_a_[kInt8MaxModuli + 1] = {}, half_b_[kInt8MaxModuli + 1] = {};
    double pow_a_[kInt8MaxModuli + 1] = {}, pow_b_[kInt8MaxModuli + 1] = {};  // 2^-half
    double pow_ab_[kInt8MaxModuli + 1] = {};                                  // 2^-(h_A + h_B)
    // What passes() needs of each row of op(A) and column of op(B) (see begin()).
    struct Row {
        int thr = 0;        // F at count c: half(c) < thr
        double pow_nu = 1;  // 2^nu
        double n1 = 0;
        int e = 0, g = 0;   // e, e + nu
    };
    std::vector<Row> row_a_, row_b_;
    std::vector<int> col_thr_;  // row_b_'s thr, pow_nu and n1 as arrays
    std::vector<double> col_pow_nu_, col_n1_;
    std::mutex merge_;
    std::int64_t failing_[kInt8MaxModuli + 1] = {};
    std::int64_t loose_[kInt8MaxModuli + 1] = {};  // certified but not tight
    double margin_[kInt8MaxModuli + 1] = {};
    std::vector<std::size_t> pending_;    // lhat 0, spans meeting, failing everywhere: for decide
    std::vector<std::size_t> by_terms_;   // proved zero term by term, ascending
    bool pending_resolved_ = false;
    struct Retested {
        std::size_t at;
        unsigned bits, tight;
        bool operator<(const Retested& o) const { return at < o.at; }
    };
    std::vector<Retested> retested_;  // ascending
};

}  // namespace amxblas::kernels

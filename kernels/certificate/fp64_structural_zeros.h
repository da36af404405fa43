// Entries of op(A) op(B) that are zero by structure: every term op(A)(i, l) op(B)(l, j) of the
// inner product has a zero factor. The FP64 emulation computes such an entry exactly (each
// slice of a zero is zero, so each of its summed terms is zero), and DGEMM's bound for it is 0,
// which no truncation bound can certify: the certificate asks this test instead, for the
// entries where its lower bound of |A||B| is 0 (docs/fp64-certificate.md, Section 10).
//
// Netlib's testers make such entries on purpose: their matrices have column n/2 zeroed but for
// the diagonal, so op(A) op(B) with K = N has a zero column but for one entry, and the calls with
// K = 5 and 9 were forwarded for want of repairs. Block-diagonal and banded operands make
// M N / 2 or more of them.
//
// The test reads the caller's operands, not the split's: a scaled value may underflow to zero
// while the unscaled one is not, and then the entry is not exact. Two checks, the cheap one
// first:
// - Nonzero spans. On its first question the test records, for each row i of op(A), the first
//   and last l where op(A)(i, l) != 0, and the same for each column j of op(B) (one read of
//   each operand: M K + K N). When the two spans do not meet, every term has a zero factor: the
//   answer is "yes" at no further cost. This answers the block-diagonal and banded cases.
// - Term by term over the overlap of the spans, when they meet: at most K reads (it stops at
//   the first term with both factors nonzero), each overlap charged against M K + K N + M N
//   reads per GEMM, the order of reading the operands once; past the cap the test answers "no"
//   and the entry is treated as before (repaired or forwarded).
#pragma once

#include <complex>
#include <cstdint>
#include <mutex>
#include <vector>

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

template <typename T>
class StructuralZeros {
public:
    explicit StructuralZeros(const GemmArgs<T>& g);
    // True when (op(A) op(B))_ij is zero by structure and one of the two checks proved it.
    bool operator()(int i, int j) { return spans_apart(i, j) || terms_zero(i, j); }
    // The first check alone: free once the spans are found (on the first question, by
    // whichever thread asks it first); may be asked from any thread, in any order.
    bool spans_apart(int i, int j);
    // The second check alone, for an entry whose spans meet: charged against the budget, so
    // the answers depend on the order of the questions; ask from one thread, in index order.
    bool terms_zero(int i, int j);

private:
    // Where the nonzeros of one row of op(A) or column of op(B) lie: first..last, or
    // first > last when there is none.
    struct Span {
        int first, last;
    };
    void find_spans();

    const GemmArgs<T>& g_;
    std::int64_t budget_;
    std::once_flag spans_found_;           // on the first question
    std::vector<Span> a_rows_, b_cols_;
};

extern template class StructuralZeros<double>;
extern template class StructuralZeros<std::complex<double>>;

}  // namespace amxblas::kernels

// Entries of op(A) op(B) that are zero by structure: every term op(A)(i, l) op(B)(l, j) of the
// inner product has a zero factor. The FP64 emulation computes such an entry exactly (each
// slice of a zero is zero, so each of its summed terms is zero), and DGEMM's bound for it is 0,
// which no truncation bound can certify: the certificate asks this test instead, for the
// entries where its lower bound of |A||B| is 0 (docs/fp64-certificate.md, Section 10).
//
// Netlib's testers make such entries on purpose: their matrices have column n/2 zeroed but for
// the diagonal, so op(A) op(B) with K = N has a zero column but for one entry, and the calls with
// K = 5 and 9 were forwarded for want of repairs.
//
// The test reads the caller's operands, not the split's: a scaled value may underflow to zero
// while the unscaled one is not, and then the entry is not exact. Each call is O(K) at worst (it
// stops at the first term with both factors nonzero), so the reads are capped at
// M K + K N + M N per GEMM, the order of reading the operands once; past the cap the test
// answers "no" and the entry is treated as before (repaired or forwarded).
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/gemm_types.h"

namespace amxblas {

template <typename T>
class StructuralZeros {
public:
    explicit StructuralZeros(const kernels::GemmArgs<T>& g);
    // True when (op(A) op(B))_ij is zero by structure and the read budget allowed the check.
    bool operator()(int i, int j);

private:
    const kernels::GemmArgs<T>& g_;
    std::int64_t budget_;
};

extern template class StructuralZeros<double>;
extern template class StructuralZeros<std::complex<double>>;

}  // namespace amxblas

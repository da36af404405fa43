// A sample's real GEMM scaled as both engines scale it, for the screens of the sampled decision
// (kernels/driver/sample_screen.h; the argument is docs/fp64-certificate.md, Section 12): the
// rows of op(A) and columns of op(B) multiplied by 2^-e (fp64_outer_exponents), their
// magnitudes, and U_ij >= (|Ahat||Bhat|)_ij, the upper bound each engine's screen tests against
// its certificate's error bound. Built in two steps, the second only where an engine's screen
// needs U: its lease is the screen's whole workspace.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "kernels/common/gemm_types.h"
#include "kernels/pack/pack.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {

struct ScaledSample {
    OperandView<double> va, vb;  // the sample's real GEMM: m x k times k x n
    int m = 0, n = 0, k = 0;
    int gamma_terms = 0;  // the n of gamma_n, as both engines take it (DGEMM: K; ZGEMM: K + 1)
    std::vector<int> ea, fb;  // the exponents, as fp64_outer_exponents finds them
    bool a_nonzero = false, b_nonzero = false;
    // After scale(): Ahat and Bhat's magnitudes, m x k and k x n, column-major; U, m x n,
    // column-major, 0 where the computed sum is 0 (the entry may be zero term by term, which
    // both engines pass); n1[j] <= ||Bhat(:, j)||_1. Scratch the engines' screens share: work
    // (max(m, n) x k) and a0 (m values).
    WorkspaceLease lease;
    double *ah = nullptr, *bh = nullptr, *upper = nullptr, *n1 = nullptr;
    double *work = nullptr, *a0 = nullptr;
    bool scaled = false;

    // The views and exponents of s (a sample of sample_gemm: N N, contiguous); false where the
    // engines would refuse it for its data (an Inf or NaN).
    bool begin(const GemmArgs<double>& s);
    bool begin(const GemmArgs<std::complex<double>>& s);
    // The lease (within cap), the scaled operands and U, once; false where the lease fails.
    bool scale(std::size_t cap);
};

// The workspace scale() leases for a sample of r x c x k (parts: 2 for ZGEMM), which
// gemm_sample.cc sizes its arena for.
std::size_t sample_screen_bytes(int r, int c, int k, int parts);

}  // namespace amxblas::kernels

// The INT8 engine's per-block loops (kernels/int8/int8_pack.cc, int8_gemm.cc's folds,
// crt_reconstruct.cc's reconstruction, int8_certificate.cc's block-row test, int8_facts.cc's
// facts pass), built once per instruction set of kernels/isa/isas.def from one source,
// kernels/isa/int8_residue_loops.inc, int8_certificate_row.inc and int8_facts_loops.inc: on
// AVX-512 they run eight doubles a vector, on AVX2 four, instead of plain x86-64's two. Every
// build computes the same integers (exact FP64 arithmetic on integers below 2^53), the same
// certificate counts and the same facts (tests/kernels/isa/kernels_int8_residues_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/crt_basis.h"

namespace amxblas::kernels::detail {

constexpr int kInt8BlockValues = 2048;  // one packed INT8 block (kAmxInt8Geometry: 32 x 64)
// Its shape: 32 rows of A (columns of B) by 64 K values; B's rows hold the K quads of 16
// columns (microkernel.h).
constexpr int kInt8BlockOuter = 32, kInt8BlockDepth = 64, kInt8QuadColumns = 16;

// One count of the INT8 certificate's block-row test (int8_certificate.cc add_block): what the
// row's nc entries need, column by column, and the row's and the count's factors.
struct Int8RowTest {
    const double* n1b;          // the columns' n1
    const double* nub;          // the columns' 2^nu
    const double* thr;          // the columns' flag thresholds (flag on: hb < thr)
    const double* lhat;         // per entry, L's lhat; 0: not counted (left to count_entry)
    double rhs_factor;          // the test's right-hand side is rhs_factor lhat
    double tight_factor;        // the tight test's, tight_factor lhat
    double hb, pax, pby, pabz;  // the count's half of op(B); the row's factors at the count
    double mc;                  // the count's running least margin, times its slack
    bool zero_passes;           // an lhs of 0 passes (tol gamma >= u)
};

// What row_counts finds of the counted entries (each sum exact: at most nc).
struct Int8RowCounts {
    double counted = 0;       // entries with lhat != 0
    double failing = 0;       // counted and failing
    double loose = 0;         // passing, not tight
    double lower_margin = 0;  // passing, lhs != 0, rhs < mc lhs (or too large to multiply)
};

struct Int8ResidueLoops {
    // out[l][at + i] = round(v[i]) mod basis.m[l] in [-128, 127], i < kInt8BlockValues,
    // for |v[i]| < 2^92 (round: to nearest, ties to even; exact integers above 2^52).
    void (*residues)(const double* v, const CrtBasis& basis, std::int8_t* const* out, std::size_t at);
    // out[at + i] = min(127, floor(|v[i]|)), for |v[i]| <= 128.
    void (*digits)(const double* v, std::int8_t* out, std::size_t at);
    // dst (32 x 32, row stride dst_ld) := (src + sum) times mod m, or sum times mod m when
    // first (src unread), in [-(m-1)/2, (m-1)/2] ([-128, 127] for 256): a K chunk's INT32 sums
    // (|sum| < 2^27) folded into the residues the INT8 driver keeps (kernels/int8/int8_walk.h);
    // times (below 256) is 1, or on the last chunk the reconstruction's factor q_l
    // (crt_reconstruct.h). src (row stride src_ld) may be dst.
    void (*fold)(int m, const std::int32_t* sum, bool first, int times, const std::int8_t* src, int src_ld,
                 std::int8_t* dst, int dst_ld);
    // crt_to_double (kernels/int8/crt_reconstruct.h) for entries e < count (<= kCrtRow): out[e]
    // = fl(P_e), rounded once, from y_l at y[l * stride + e] (|y_l| <= 128), then, unless
    // exponent is null, times 2^exponent[e] as times_pow2 (kernels/common/pow2.h) rounds it, a
    // zero +0. The sums sum_l y_l w_lj are integers below 2^53 and every later step is exact but
    // the roundings named, each correctly rounded, so every build gives the same bits.
    void (*crt_row)(const CrtBasis& basis, const std::int8_t* y, std::size_t stride, int count, const int* exponent,
                    double* out);
    // The certificate's test of one count over a row of nc entries (kernels/isa/int8_certificate_row.inc):
    // how many entries are counted, fail, pass without being tight and pass with rhs < mc lhs.
    void (*row_counts)(int nc, const Int8RowTest& t, Int8RowCounts* out);
    // The facts of rows (columns) o0 .. o0 + count - 1 of a real operand x (leading dimension
    // ld; outer_contiguous: entry (o, l) at x[o + l ld], else at x[o ld + l]), over K = depth:
    // extremes sets, index o - o0, the largest |x|, the least lowest set bit as a power of two
    // (+inf where all are 0) and 1, or 0 where an entry is Inf or NaN; scaled_sums adds
    // |x| scale[o - o0] and its square to s1 and s2, each row's in K order.
    void (*extremes)(const double* x, std::size_t ld, bool outer_contiguous, int o0, int count, int depth,
                     double* mx, double* low, double* finite);
    void (*scaled_sums)(const double* x, std::size_t ld, bool outer_contiguous, int o0, int count, int depth,
                        const double* scale, double* s1, double* s2);
    // For rows contiguous in memory (x[o + l ld]), extremes' three and, in the same read, the
    // least nonzero |x| (+inf where all are 0) and the unscaled sums of |x| and x^2, each row's
    // in K order (set, not added to).
    void (*extremes_and_sums)(const double* x, std::size_t ld, int o0, int count, int depth, double* mx,
                              double* low, double* finite, double* least, double* s1, double* s2);
    // A whole block of an untransposed real operand, scaled, in the packed order (int8_pack.cc's
    // gather, whose plain loops handle every other case; null in the builds without a faster
    // one): v[packed position of (o, l)] = x(o, l) * scale[o] for the block's kInt8BlockOuter
    // rows of op(A) = A (is_a; x(o, l) at base[o + l * ld]) or columns of op(B) = B (x(o, l) at
    // base[o * ld + l]) and kInt8BlockDepth K values. Each value is one product, as there.
    void (*gather_full)(bool is_a, const double* base, std::size_t ld, const double* scale, double* v);
    // gather_full and then digits(v, out, at) in one pass, without v (null where gather_full is).
    void (*digits_full)(bool is_a, const double* base, std::size_t ld, const double* scale, std::int8_t* out,
                        std::size_t at);
};

const Int8ResidueLoops& int8_residue_loops_portable();
const Int8ResidueLoops& int8_residue_loops_avx2();
const Int8ResidueLoops& int8_residue_loops_avx512();

}  // namespace amxblas::kernels::detail

// Packing: op(A) and op(B) (or a chunk of each: kernels/bf16/chunking.h) into block-contiguous
// BF16 component buffers (paper Section 6.2), split and packed in one pass. Transposes, leading dimensions and edges are resolved here:
// every block is a full K step of the micro-kernel set's geometry (microkernel.h draws the
// layout), zero-padded past m, n, k, so the micro-kernels never see a partial tile.
//
// Buffer of one slice, A: block (panel i, K step s) at ((i * ksteps) + s) * block_elems, where
// panel i covers rows mr*i .. mr*i + mr - 1 of op(A). B: the same with panel j = columns
// nr*j .. nr*j + nr - 1. A micro-tile's BK panel is therefore `ksteps_in_panel` consecutive
// blocks.
//
// The geometry comes with the PackedOperand (the driver copies the micro-kernel set's). For
// kAmxGeometry, the production sets' one, the packers run their fast paths (pack_fp32.cc,
// pack_fp64.cc, on pack_blocks.h's block walk: the AVX-512 gathers, the fused gather + split);
// every other geometry is packed by the
// portable loops of pack_generic.cc, which give the same slices value for value (the split is
// elementwise), only placed for that geometry.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/isa/microkernel.h"
#include "kernels/runtime/per_participant.h"
#include "kernels/isa/split.h"

namespace amxblas::kernels {

inline int round_up_tile(int x) { return (x + kTile - 1) / kTile * kTile; }
inline int round_up(int x, int step) { return (x + step - 1) / step * step; }

struct PackedOperand {
    bf16_t* slice[kFp64Slices + 1] = {};  // FP64 auto: one more, for |Z_0| (kernels/bf16/fp64_gemm.cc)
    int slices = 0;
    int panels = 0;  // row panels of op(A), or column panels of op(B)
    int ksteps = 0;
    // Write the blocks with non-temporal stores (FP32 pack): set by the driver when the
    // component buffers are larger than the last-level cache, where they would only evict the
    // input the pack is still reading and cost a read of every destination line first.
    bool stream = false;
    // The micro-kernel set's geometry, and this operand's block in it: mr * kstep values (A)
    // or kstep * nr (B).
    TileGeometry geom = kAmxGeometry;
    std::size_t block_elems = kStepElems;
    const bf16_t* block(int s, int panel, int kstep) const {
        return slice[s] + (std::size_t(panel) * ksteps + kstep) * block_elems;
    }
};

// BF16 values in one slice buffer of an operand with `outer` rows (A) or columns (B), padded
// to whole tiles (tile: mr for A, nr for B) and K steps.
inline std::size_t packed_slice_elems(int outer, int k, int tile = kTile, int kstep = kTile) {
    return std::size_t(round_up(outer, tile)) * std::size_t(round_up(k, kstep));
}

// How a view's values come from storage. real: op(X) itself. The complex kinds present a
// complex op(X) (stored interleaved: real part, imaginary part) as the real matrix whose
// product is the complex one (kernels/bf16/complex_gemm.cc), with K' = 2K:
//   complex_a: op(A') is m x 2k,   A'(i, 2l + e) = (Re, Im)[e] of op(A)(i, l);
//   complex_b: op(B') is 2k x 2n,  B'(2l + e, 2j + f) = [[Re, Im], [-Im, Re]][e][f] of op(B)(l, j).
// Then (op(A') op(B'))(i, 2j) = Re C(i, j) and (i, 2j + 1) = Im C(i, j).
enum class Interleave { real, complex_a, complex_b };

// Matrix operands as the BLAS sees them: op(A) is m x k, op(B) is k x n, column-major storage.
template <typename T>
struct OperandView {
    char trans;  // 'N' or 'T' (callers normalise case; 'C' is 'T' for real views); complex
                 // views keep 'C', whose conjugation the packer applies as a sign
    int rows, cols;  // of op(X) (of op(X') for complex views)
    const T* x;      // complex views: the interleaved storage
    std::int64_t ld;  // in elements of the stored matrix (complex elements for complex views)
    Interleave kind = Interleave::real;
};

// Component-buffer bytes above which the FP32 pack streams its stores: the last-level cache
// (sysconf(_SC_LEVEL3_CACHE_SIZE); 32 MiB where the system does not say).
std::size_t streaming_threshold_bytes();

void pack_a_fp32(const OperandView<float>& a, const PackedOperand& out, const SplitKernels& sk, int threads);
void pack_b_fp32(const OperandView<float>& b, const PackedOperand& out, const SplitKernels& sk, int threads);

// FP64 (paper Section 4.3, with exact per-row/per-column scaling).
//
// Scaling: each row i of op(A) is split as op(A)(i, :) * 2^-e_i and each column j of op(B) as
// op(B)(:, j) * 2^-f_j, where e_i (f_j) = ceil(log2 max |entry|) over the row (column), 0 for a
// zero row. Multiplying by a power of two is exact unless the result is subnormal, i.e. below
// 2^-1022 relative to the row's largest entry: such a value changes by at most 2^-1075, far
// below the grid 2^(v(r) - 8) >= 2^-1008 of every slice the packer keeps (kFp64MinSliceExp),
// so every slice is the slice of the exact scaled value and only the residual moves (by at
// most 2^-1075, which fp64_certificate.h counts). The scaled operand has max |x| in (1/2, 1]
// per nonzero row, so v(0) = 0 and each row's own exponent sets its slice grids; the driver
// multiplies C(i, j) back by 2^(e_i + f_j).
//
// outer_exponents: e_i for each row of op(X) (as_rows, A) or f_j for each column (B), into
// exps[0..rows-1] or exps[0..cols-1]; *nonzero says whether any entry is nonzero, and zero
// (optional) gets 1 for each row (column) that is entirely zero. Returns "domain:nonfinite"
// when an entry is Inf or NaN, else nullptr.
const char* fp64_outer_exponents(const OperandView<double>& x, bool as_rows, int threads, int* exps, bool* nonzero,
                                 unsigned char* zero = nullptr);

// What the split of one operand found (the certificate reads it).
struct Fp64Split {
    Fp64Scales sc;                        // of the scaled operand; sc.slices written
    double resid[kFp64Slices + 1] = {};   // max |X^(r)| of the scaled operand, r = 0..sc.slices
    bool subnormal_scaled = false;        // some nonzero scaled entry was below 2^-1022
    // Optional (set by the caller, filled by the split): norms[p * outer + o] = sum of
    // |stored slice p| over row (column) o, exact (fp64_certificate.h).
    double* norms = nullptr;
};

// The packer's own pieces, shared by the fast paths (pack_fp32.cc, pack_fp64.cc) and
// pack_generic.cc (not for other callers).
//
// The portable packer for any micro-kernel geometry (pack_generic.cc): what the fast paths hand
// every operand whose geometry is not kAmxGeometry. The fast paths (AVX-512 gathers, fused
// gather + split, exponent scan inside the pack) are written for kAmxGeometry's 32x32 blocks;
// there each block is gathered element by element into a staging tile in the geometry's packed
// order and split with the same split table (split.h), so every slice value is the one the fast
// path computes, only placed for the other geometry. Not tuned: no production set uses it.

// One participant's part of an FP64 pack's reductions (both packers), a cache line of its
// own: the worst slice status, whether a scaled value fell below 2^-1022, max |X^(t)|.
struct alignas(kCacheLine) Fp64PackPartial {
    int worst = 0;
    bool subnormal = false;
    double mx[kFp64Slices + 1] = {};
};

// The participants' parts folded: resid_max (optional) gets the maxima, *subnormal (optional)
// the flag; returns nullptr or the slice range reason of the worst status.
const char* fold_fp64_partials(const PerParticipant<Fp64PackPartial>& part, double* resid_max, bool* subnormal);

// pack_a_fp32 / pack_b_fp32 (above) for out.geom.
void pack_fp32_generic(bool is_a, const OperandView<float>& x, const PackedOperand& out, const SplitKernels& sk,
                       int threads);

// pack_fp64.h's pack_fp64 without the exponent scan, for out.geom: op(X) scaled by exps (nullptr:
// unscaled), split with sc; resid_max, norms, subnormal optional, as there (Fp64Split). Returns nullptr or the slice range reason.
const char* pack_fp64_generic(bool is_a, const OperandView<double>& x, const int* exps, const Fp64Scales& sc,
                              const PackedOperand& out, const SplitKernels& sk, int threads, double* resid_max,
                              double* norms, bool* subnormal);

}  // namespace amxblas::kernels

// Packing: op(A) and op(B) into block-contiguous BF16 component buffers (paper Section 6.2),
// split and packed in one pass. Transposes, leading dimensions and edges are resolved here:
// every block is a full 32x32 K step (microkernel.h draws the layout), zero-padded past m, n, k,
// so the micro-kernels never see a partial tile.
//
// Buffer of one slice, A: block (panel i, K step s) at ((i * ksteps) + s) * kStepElems, where
// panel i covers rows 32i..32i+31 of op(A). B: the same with panel j = columns 32j..32j+31.
// A micro-tile's BK panel is therefore `ksteps_in_panel` consecutive blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/microkernel.h"
#include "kernels/split.h"

namespace amxblas::kernels {

inline int round_up_tile(int x) { return (x + kTile - 1) / kTile * kTile; }

struct PackedOperand {
    bf16_t* slice[kFp64Slices] = {};
    int slices = 0;
    int panels = 0;  // row panels of op(A), or column panels of op(B)
    int ksteps = 0;
    // Write the blocks with non-temporal stores (FP32 pack): set by the driver when the
    // component buffers are larger than the last-level cache, where they would only evict the
    // input the pack is still reading and cost a read of every destination line first.
    bool stream = false;
    const bf16_t* block(int s, int panel, int kstep) const {
        return slice[s] + (std::size_t(panel) * ksteps + kstep) * kStepElems;
    }
};

// BF16 values in one slice buffer of an operand with `outer` rows (A) or columns (B).
inline std::size_t packed_slice_elems(int outer, int k) {
    return std::size_t(round_up_tile(outer)) * std::size_t(round_up_tile(k));
}

// How a view's values come from storage. real: op(X) itself. The complex kinds present a
// complex op(X) (stored interleaved: real part, imaginary part) as the real matrix whose
// product is the complex one (kernels/complex_gemm.cc), with K' = 2K:
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

// FP64: the matrix-wide scales (Eq. 13) are computed in up to six reduction passes first.
// Returns nullptr or a forward reason ("domain:nonfinite", "domain:slice-subnormal",
// "domain:slice-overflow"); on failure the buffers hold garbage and must not be used.
const char* fp64_scales(const OperandView<double>& x, const SplitKernels& sk, int threads, Fp64Scales* sc);
const char* pack_a_fp64(const OperandView<double>& a, const Fp64Scales& sc, const PackedOperand& out,
                        const SplitKernels& sk, int threads);
const char* pack_b_fp64(const OperandView<double>& b, const Fp64Scales& sc, const PackedOperand& out,
                        const SplitKernels& sk, int threads);

// The same scales and packs with fewer passes over op(X): fp64_first_scale() finds sc[0] (and
// nonfinite input, "domain:nonfinite") with one read; split_pack_*_fp64() then finds the other
// scales and packs, usually in one more read (pack.cc), leaving in *sc what fp64_scales() gives
// and in the buffers what pack_*_fp64() writes with it. Same failure reasons.
const char* fp64_first_scale(const OperandView<double>& x, const SplitKernels& sk, int threads, Fp64Scales* sc);
const char* split_pack_a_fp64(const OperandView<double>& a, Fp64Scales* sc, const PackedOperand& out,
                              const SplitKernels& sk, int threads);
const char* split_pack_b_fp64(const OperandView<double>& b, Fp64Scales* sc, const PackedOperand& out,
                              const SplitKernels& sk, int threads);

}  // namespace amxblas::kernels

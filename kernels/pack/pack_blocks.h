// The block walk every fast-path packer shares (pack_fp32.cc, pack_fp64.cc; internal): gathers
// of op(X) into kAmxGeometry's packed order, the block order, for_each_packed_block.
#pragma once

#include <xmmintrin.h>

#include <algorithm>
#include <cstddef>

#include "kernels/pack/pack.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

// A block: tile[r * 32 + kk] = op(A)(i0 + r, l0 + kk).
template <typename T>
void gather_a(const OperandView<T>& a, int i0, int l0, T* tile) {
    const int rows = std::min(kTile, a.rows - i0), ks = std::min(kTile, a.cols - l0);
    std::fill(tile, tile + kStepElems, T(0));
    if (a.trans == 'N') {
        // Columns of A are contiguous in i: read down a column, write with stride 32.
        for (int kk = 0; kk < ks; ++kk) {
            const T* col = a.x + i0 + std::size_t(l0 + kk) * a.ld;
            for (int r = 0; r < rows; ++r) tile[r * kTile + kk] = col[r];
        }
    } else {
        for (int r = 0; r < rows; ++r) {
            const T* row = a.x + l0 + std::size_t(i0 + r) * a.ld;
            std::copy(row, row + ks, tile + r * kTile);
        }
    }
}

// B block (VNNI): tile[h * 512 + p * 32 + nn * 2 + e] = op(B)(l0 + 2p + e, j0 + 16h + nn).
template <typename T>
void gather_b(const OperandView<T>& b, int l0, int j0, T* tile) {
    const int ks = std::min(kTile, b.rows - l0), cols = std::min(kTile, b.cols - j0);
    std::fill(tile, tile + kStepElems, T(0));
    for (int c = 0; c < cols; ++c) {
        T* dst = tile + (c / 16) * kHalfElems + (c % 16) * 2;
        if (b.trans == 'N') {
            const T* col = b.x + l0 + std::size_t(j0 + c) * b.ld;  // contiguous in K
            for (int kk = 0; kk < ks; ++kk) dst[(kk / 2) * kTile + (kk % 2)] = col[kk];
        } else {
            for (int kk = 0; kk < ks; ++kk) dst[(kk / 2) * kTile + (kk % 2)] = b.x[j0 + c + std::size_t(l0 + kk) * b.ld];
        }
    }
}

// op(X)(r, c) of a complex view's complex matrix: its real and imaginary parts, the
// imaginary one negated for 'C'. The split is odd (split(-x) = -split(x): round to nearest
// even is symmetric), so negating before the split gives the slices of the negated value.
template <typename T>
inline void complex_at(const OperandView<T>& v, int r, int c, T* re, T* im) {
    const std::size_t e = v.trans == 'N' ? r + std::size_t(c) * v.ld : c + std::size_t(r) * v.ld;
    *re = v.x[2 * e];
    *im = v.trans == 'C' ? -v.x[2 * e + 1] : v.x[2 * e + 1];
}

// Complex A block: tile[r * 32 + kk] = op(A')(i0 + r, l0 + kk) (pack.h, Interleave), zeros past
// the edges. l0 and the depth 2k are even, so parts come in (Re, Im) pairs.
template <typename T>
void gather_complex_a(const OperandView<T>& a, int i0, int l0, T* tile) {
    const int rows = std::min(kTile, a.rows - i0), ks = std::min(kTile, a.cols - l0);
    std::fill(tile, tile + kStepElems, T(0));
    for (int r = 0; r < rows; ++r)
        for (int kk = 0; kk < ks; kk += 2) complex_at(a, i0 + r, (l0 + kk) / 2, &tile[r * kTile + kk], &tile[r * kTile + kk + 1]);
}

// Complex B block (VNNI, as gather_b): each complex op(B)(l, j) fills a 2 x 2 block of op(B'),
// [[Re, Im], [-Im, Re]]; l0 and j0 are even, so every 2 x 2 block lies in one tile.
template <typename T>
void gather_complex_b(const OperandView<T>& b, int l0, int j0, T* tile) {
    const int ks = std::min(kTile, b.rows - l0), cols = std::min(kTile, b.cols - j0);
    std::fill(tile, tile + kStepElems, T(0));
    auto at = [tile](int kk, int c) -> T& { return tile[(c / 16) * kHalfElems + (kk / 2) * kTile + (c % 16) * 2 + kk % 2]; };
    for (int c = 0; c < cols; c += 2)
        for (int kk = 0; kk < ks; kk += 2) {
            T re, im;
            complex_at(b, (l0 + kk) / 2, (j0 + c) / 2, &re, &im);
            at(kk, c) = re;
            at(kk + 1, c) = -im;
            at(kk, c + 1) = im;
            at(kk + 1, c + 1) = re;
        }
}

inline std::size_t block_offset(const PackedOperand& out, int panel, int kstep) {
    return (std::size_t(panel) * out.ksteps + kstep) * kStepElems;
}

// The block order one thread walks: panel by panel (each panel's K steps in turn, so the
// packed buffer is written front to back), or, for the FP32 pack of a strided source (op(A)
// 'N', op(B) 'T'), K step by K step (the panels of one K step in turn, so each source column
// is read front to back instead of in 128-byte pieces a page apart). The FP64 pack reads
// 256-byte pieces, and for it the panel order is the faster one for both strided sources
// (amxblas_split_pack_phases 1024 3 2 11, FP64-6, 2 threads, side by side on the 2-core VM:
// fused op(B) 'T' 0.42-0.46 ms against 0.65-0.72, fused op(A) 'N' 0.52 against 0.72, and into
// buffers both threads had just read, NN A then B 1.80 against 2.04 ms; through amxblas_bench
// at N = 1024, 3 alternating runs: FP64-6 +3-7%, FP64-21 +4-22%). For FP32 it was not
// (same runs: FP32 -11% to +19%; an ad-hoc in-call probe: 7-25% slower), so the FP32 pack
// keeps it.
struct BlockOrder {
    int panels, ksteps;
    bool panel_inner;
    void at(int q, int* p, int* s) const {
        if (panel_inner) *p = q % panels, *s = q / panels;
        else *p = q / ksteps, *s = q % ksteps;
    }
};

template <bool IsA, typename T>
BlockOrder block_order(const OperandView<T>& x, const PackedOperand& out) {
    return {out.panels, out.ksteps, sizeof(T) == sizeof(float) && (x.trans == 'N') == IsA};
}

// A full block (panel p, K step s) of a real view: its corner in storage and how it lies
// (pack_gather.h); nullptr for an edge block (zero-padded) or a complex view's.
template <bool IsA, typename T>
const T* full_block(const OperandView<T>& x, int p, int s, BlockSource* kind) {
    const int i0 = p * kTile, l0 = s * kTile;
    const int outer = IsA ? x.rows : x.cols, kdim = IsA ? x.cols : x.rows;
    if (x.kind != Interleave::real || i0 + kTile > outer || l0 + kTile > kdim) return nullptr;
    // Column-major storage: op(X)(row, col) of 'N' is at x[row + col * ld], of 'T' at
    // x[col + row * ld]; for A, row = i and col = l; for B, row = l and col = j.
    const bool n = x.trans == 'N';
    const std::size_t ld = std::size_t(x.ld);
    *kind = IsA ? (n ? BlockSource::a_n : BlockSource::a_t) : (n ? BlockSource::b_n : BlockSource::b_t);
    return IsA ? (n ? x.x + i0 + l0 * ld : x.x + l0 + i0 * ld) : (n ? x.x + l0 + i0 * ld : x.x + i0 + l0 * ld);
}

// Gathers block (panel p, K step s) of op(X) into tile: a full block through the split table's
// gather, an edge block (zero-padded) through the generic loops above.
template <bool IsA, typename T>
void gather_block(const OperandView<T>& x, const SplitKernels& sk, int p, int s, T* tile) {
    BlockSource kind;
    if (const T* src = full_block<IsA>(x, p, s, &kind)) {
        if constexpr (sizeof(T) == 4) sk.gather_fp32(kind, src, std::size_t(x.ld), tile);
        else sk.gather_fp64(kind, src, std::size_t(x.ld), tile);
        return;
    }
    const int i0 = p * kTile, l0 = s * kTile;
    if (x.kind != Interleave::real) {
        if (IsA) gather_complex_a(x, i0, l0, tile);
        else gather_complex_b(x, l0, i0, tile);
    } else {
        if (IsA) gather_a(x, i0, l0, tile);
        else gather_b(x, l0, i0, tile);
    }
}

// Requests the source lines of a full block (32 runs of 32 values, ld apart: every
// BlockSource lies so) ahead of its gather; nothing for an edge or complex block.
template <bool IsA, typename T>
void prefetch_block(const OperandView<T>& x, const BlockOrder& order, int q) {
    int p, s;
    order.at(q, &p, &s);
    BlockSource kind;
    const T* src = full_block<IsA>(x, p, s, &kind);
    if (!src) return;
    for (int j = 0; j < kTile; ++j) {
        const char* run = reinterpret_cast<const char*>(src + std::size_t(j) * std::size_t(x.ld));
        for (int b = 0; b < int(kTile * sizeof(T)); b += 64) _mm_prefetch(run + b, _MM_HINT_T0);
    }
}

// body(q, participant) for every block q of the order, in runs of consecutive blocks per task
// so that each block's source can be requested while the one before is packed (the gathers
// read 32 runs a block, too many streams for the hardware prefetchers at large ld).
template <bool IsA, typename T, typename Body>
void for_each_packed_block(const OperandView<T>& x, const BlockOrder& order, int threads, Body&& body) {
    const int blocks = order.panels * order.ksteps;
    const int run = std::clamp(blocks / (16 * std::max(1, threads)), 1, 8);
    parallel_for(threads, (blocks + run - 1) / run, [&](int task, int who) {
        const int q0 = task * run, q1 = std::min(blocks, q0 + run);
        for (int q = q0; q < q1; ++q) {
            if (q + 1 < q1) prefetch_block<IsA>(x, order, q + 1);
            body(q, who);
        }
    });
}

}  // namespace amxblas::kernels

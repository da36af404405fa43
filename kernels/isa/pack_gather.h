// The packer's gathers: one full 32x32 block of op(X) into a 1024-value staging tile that is
// already in the packed order (pack.h, microkernel.h), so the split then runs over a
// contiguous run (split.h). Pure data movement; the instruction set only decides how it is
// done: plain loops (pack_gather.cc) or in-register transposes (pack_gather_avx512.cc), which
// put every value in the same place (tests/kernels/pack/kernels_split_test.cc checks it). The split
// tables carry them (SplitKernels, split.h), so one pack runs one instruction set throughout.
#pragma once

#include <cstddef>

namespace amxblas::kernels {

// Where a full 32x32 block of op(X) comes from, relative to the packed order (pack.h):
// a_n: op(A) = A, column-major, element (r, kk) at src[r + kk * ld] (a transpose);
// a_t: op(A) = A^T, element (r, kk) at src[kk + r * ld] (rows already contiguous);
// b_n: op(B) = B, element (kk, c) at src[kk + c * ld] (a transpose of K pairs);
// b_t: op(B) = B^T, element (kk, c) at src[c + kk * ld] (rows interleaved in pairs).
enum class BlockSource : int { a_n, a_t, b_n, b_t };

// T is float or double. tile is 64-byte aligned and gets, for A: tile[r * 32 + kk]; for B:
// tile[h * 512 + p * 32 + c * 2 + e] for K = 2p + e, column 16h + c.
template <typename T>
void gather_portable(BlockSource kind, const T* src, std::size_t ld, T* tile);
// Built with the AVX-512 flags: callers check cpu_has_avx512_split() first.
template <typename T>
void gather_avx512(BlockSource kind, const T* src, std::size_t ld, T* tile);

}  // namespace amxblas::kernels

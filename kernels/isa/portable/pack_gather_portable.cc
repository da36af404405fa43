// The portable gathers of pack_gather.h: the definition the AVX-512 ones must match.
#include "kernels/isa/pack_gather.h"

#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {
namespace {

// Packed position of op(B)(kk, c) in a B block.
inline int b_index(int kk, int c) { return (c / 16) * kHalfElems + (kk / 2) * kTile + (c % 16) * 2 + kk % 2; }

}  // namespace

template <typename T>
void gather_portable(BlockSource kind, const T* src, std::size_t ld, T* tile) {
    for (int o = 0; o < kTile; ++o)      // outer: the contiguous run of src
        for (int q = 0; q < kTile; ++q) {  // inner: along it
            const T x = src[q + o * ld];
            switch (kind) {
                case BlockSource::a_n: tile[q * kTile + o] = x; break;
                case BlockSource::a_t: tile[o * kTile + q] = x; break;
                case BlockSource::b_n: tile[b_index(q, o)] = x; break;
                case BlockSource::b_t: tile[b_index(o, q)] = x; break;
            }
        }
}

template void gather_portable(BlockSource, const float*, std::size_t, float*);
template void gather_portable(BlockSource, const double*, std::size_t, double*);

}  // namespace amxblas::kernels

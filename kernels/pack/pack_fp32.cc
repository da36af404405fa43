// The FP32 pack (pack.h): op(A), op(B) gathered and split into three BF16 slices per block,
// written in place or streamed past the cache; pack_generic.cc for other geometries.
#include <emmintrin.h>
#include <xmmintrin.h>
#include <unistd.h>

#include "kernels/pack/pack.h"
#include "kernels/pack/pack_blocks.h"

namespace amxblas::kernels {
namespace {

// One packed 2 KiB block written with non-temporal stores: no read of the destination lines
// before they are overwritten, and the block does not evict the data the pack still reads.
// SSE2 (every x86-64); dst is 64-byte aligned (blocks are 2 KiB apart from 64-byte aligned
// slices).
void stream_block(const bf16_t* src, bf16_t* dst) {
    const __m128i* s = reinterpret_cast<const __m128i*>(src);
    __m128i* d = reinterpret_cast<__m128i*>(dst);
    for (int q = 0; q < int(kStepElems * sizeof(bf16_t) / sizeof(__m128i)); ++q) _mm_stream_si128(d + q, _mm_load_si128(s + q));
}

template <bool IsA>
void pack_fp32(const OperandView<float>& x, const PackedOperand& out, const SplitKernels& sk, int threads) {
    if (out.geom != kAmxGeometry) return pack_fp32_generic(IsA, x, out, sk, threads);  // pack_generic.cc
    const BlockOrder order = block_order<IsA>(x, out);
    for_each_packed_block<IsA>(x, order, threads, [&](int q, int) {
        int p, s;
        order.at(q, &p, &s);
        const std::size_t o = block_offset(out, p, s);
        alignas(64) bf16_t staged[kFp32Slices][kStepElems];
        bf16_t* dst[kFp32Slices];
        for (int t = 0; t < kFp32Slices; ++t) dst[t] = out.stream ? staged[t] : out.slice[t] + o;
        BlockSource kind;
        if (const float* src = full_block<IsA>(x, p, s, &kind)) {
            sk.gather_split_fp32(kind, src, std::size_t(x.ld), dst[0], dst[1], dst[2]);
        } else {
            alignas(64) float tile[kStepElems];
            gather_block<IsA>(x, sk, p, s, tile);
            sk.fp32(tile, kStepElems, dst[0], dst[1], dst[2]);
        }
        if (!out.stream) return;
        for (int t = 0; t < kFp32Slices; ++t) stream_block(staged[t], out.slice[t] + o);
        _mm_sfence();  // this thread's streaming stores are visible before the compute reads them
    });
}

}  // namespace

void pack_a_fp32(const OperandView<float>& a, const PackedOperand& out, const SplitKernels& sk, int threads) {
    pack_fp32<true>(a, out, sk, threads);
}

void pack_b_fp32(const OperandView<float>& b, const PackedOperand& out, const SplitKernels& sk, int threads) {
    pack_fp32<false>(b, out, sk, threads);
}

std::size_t streaming_threshold_bytes() {
    static const std::size_t t = [] {
        const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        return llc > 0 ? std::size_t(llc) : std::size_t(32) << 20;
    }();
    return t;
}

}  // namespace amxblas::kernels

// The VPDPBUSD peak of this core, beside the VDPBF16PS one of bench_peak_avx512bf16.cc, and the
// avx512 INT8 micro-kernel's in-cache rate against it: what the FP64 INT8 engine's products
// can reach here. This file alone is compiled with -mavx512vnni (bench/CMakeLists.txt);
// it runs only after the caller's run-time check (cpu_has_avx512_vnni()).
//
// Peak: 16 independent accumulators updated by _mm512_dpbusd_epi32 from registers, as the
// BF16 peak is measured, so the two rates compare instruction for instruction (one VPDPBUSD is
// 64 byte multiply-adds, one VDPBF16PS 32 BF16 ones). Micro-kernel: product_s8 on one panel
// of 4 K steps (256 deep, 2 x 8 KiB, in L1), counted in VPDPBUSD-equivalents: a 32 x 32 x 64
// K step is 32*32*64/64 = 1024 of them.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/isa/backend.h"
#include "kernels/isa/microkernel.h"
#include "bench/bench.h"
#include "tests/common/rng.h"

namespace amxblas::bench {

namespace {

constexpr int kAccumulators = 16;

// VPDPBUSD instructions per second of one thread, over blocks of 2^16 x 16 until `seconds`.
double vpdpbusd_peak_one_thread(double seconds) {
    __m512i acc[kAccumulators];
    for (auto& a : acc) a = _mm512_setzero_si512();
    // +4 per lane per update; the cap of 2048 blocks (2^27 updates) keeps every lane below 2^31.
    const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
    long blocks = 0;
    const double t0 = now_s();
    double t = 0;
    do {
        for (long i = 0; i < (1L << 16); ++i) {
#pragma GCC unroll 16
            for (auto& a : acc) a = _mm512_dpbusd_epi32(a, x, y);
        }
        ++blocks;
        t = now_s() - t0;
    } while (t < seconds && blocks < 2048);
    unsigned sink = 0;
    for (auto& a : acc) sink += unsigned(_mm512_reduce_add_epi32(a));
    __asm__ volatile("" : : "r"(sink));
    return double(blocks) * (1L << 16) * kAccumulators / t;
}

// product_s8's rate in VPDPBUSD-equivalents per second, one thread.
double product_s8_one_thread(kernels::Int8Product product_s8, double seconds) {
    const kernels::TileGeometry g = kernels::kAmxInt8Geometry;
    const int ks = kernels::kBlockK / g.kstep;
    std::vector<std::int8_t> a(std::size_t(ks) * g.a_block_elems()), b(std::size_t(ks) * g.b_block_elems());
    test::Rng rng(7);
    for (auto& v : a) v = std::int8_t(rng.next() >> 56);
    for (auto& v : b) v = std::int8_t(rng.next() >> 56);
    std::vector<std::int32_t> c(std::size_t(g.mr) * g.nr);
    const double per_call = double(g.mr) * g.nr * g.kstep / 64.0 * ks;
    long calls = 0;
    const double t0 = now_s();
    double t = 0;
    do {
        for (int q = 0; q < 64; ++q) product_s8(ks, a.data(), b.data(), c.data(), g.nr);
        calls += 64;
        t = now_s() - t0;
    } while (t < seconds);
    __asm__ volatile("" : : "r"(c.data()) : "memory");
    return calls * per_call / t;
}

}  // namespace

// The caller checks cpu_has_avx512_vnni() (bench_main.cc): with these flags the compiler may use
// AVX-512 anywhere in this file.
VnniPeakResult measure_vnni_peak(double seconds_per_point) {
    VnniPeakResult r;
    r.ran = true;
    const kernels::MicroKernels mk = kernels::microkernels_for(kernels::Backend::avx512);
    for (int q = 0; q < 3; ++q) {  // best of 3: interference can only lower a rate
        r.peak_1t = std::max(r.peak_1t, vpdpbusd_peak_one_thread(seconds_per_point));
        r.product_s8_1t = std::max(r.product_s8_1t, product_s8_one_thread(mk.product_s8, seconds_per_point));
    }
    return r;
}

}  // namespace amxblas::bench

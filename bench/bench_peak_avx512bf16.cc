// The VDPBF16PS peak of this core and the avx512 micro-kernel's in-cache rate against it.
// This file alone is compiled with -mavx512bf16 (bench/CMakeLists.txt); it runs only
// after the caller's run-time check.
//
// Peak: 16 independent accumulators (more than the latency x throughput product of any core
// that has the instruction), each updated by _mm512_dpbf16_ps from registers, no memory
// operands. Unit: VDPBF16PS instructions per second (one zmm instruction = 32 BF16 products).
// Micro-kernel: the contract of kernels/isa/microkernel.h on one BK = 256 panel held in cache
// (product: 2 x 16 KiB, fp32_chain: 6 x 16 KiB, both in L2), counted in the same unit:
// a 32 x 32 x 32 K step of one component product is 32*32*32/32 = 1024 VDPBF16PS-equivalents.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kernels/isa/backend.h"
#include "kernels/isa/microkernel.h"
#include "bench/bench.h"
#include "tests/common/rng.h"

namespace amxblas::bench {

namespace {

constexpr int kAccumulators = 16;
constexpr double kEquivPerKStep = double(kernels::kTile) * kernels::kTile * kernels::kTile / 32.0;

// Instructions per second of one thread over `iters` x 16 instructions.
double peak_one_thread(long iters) {
    __m512 acc[kAccumulators];
    for (auto& a : acc) a = _mm512_setzero_ps();
    const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3F803F80);  // BF16 pairs (1, 1)
    const __m512bh y = (__m512bh)_mm512_set1_epi32(0x0D800D80);  // (2^-100, 2^-100): no overflow
    const double t0 = now_s();
    for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
        for (auto& a : acc) a = _mm512_dpbf16_ps(a, x, y);
    }
    const double t = now_s() - t0;
    float sink = 0;
    for (auto& a : acc) sink += _mm512_reduce_add_ps(a);
    __asm__ volatile("" : : "x"(sink));
    return double(iters) * kAccumulators / t;
}

// Rate of the micro-kernel entry `chain` (fp32_chain) or product, in VDPBF16PS-equivalents/s.
double microkernel_one_thread(const kernels::MicroKernels& mk, bool chain, double seconds) {
    const int ks = kernels::kBlockK / kernels::kTile;
    const std::size_t panel = std::size_t(ks) * kernels::kStepElems;
    std::vector<kernels::bf16_t> buf(6 * panel);
    test::Rng rng(7);
    for (auto& v : buf) v = kernels::bf16_t(0x3F80 | rng.below(0x80));  // [1, 2), normal
    std::vector<float> c(kernels::kStepElems);
    kernels::Fp32Panels p{};
    for (int s = 0; s < 3; ++s) {
        p.a[s] = buf.data() + s * panel;
        p.b[s] = buf.data() + (3 + s) * panel;
    }
    const double per_call = kEquivPerKStep * ks * (chain ? 6 : 1);
    mk.thread_begin();
    long calls = 0;
    const double t0 = now_s();
    double t = 0;
    do {
        for (int q = 0; q < 64; ++q) {
            if (chain) mk.fp32_chain(ks, p, c.data(), kernels::kTile);
            else mk.product(ks, p.a[0], p.b[0], c.data(), kernels::kTile);
        }
        calls += 64;
        t = now_s() - t0;
    } while (t < seconds);
    mk.thread_end();
    __asm__ volatile("" : : "r"(c.data()) : "memory");
    return calls * per_call / t;
}

// Sum over `threads` threads running f at once.
template <typename F>
double all_threads(int threads, F f) {
    double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += f();
    return total;
}

// The best of three: the machine is shared, and a rate can only be lowered by interference.
template <typename F>
double best_of_3(F f) {
    double best = 0;
    for (int q = 0; q < 3; ++q) best = std::max(best, f());
    return best;
}

}  // namespace

// The caller checks that the avx512 backend is built and runnable (bench_main.cc): a check in here would come too
// late, since with these flags the compiler uses AVX-512 from the first instruction (GCC 12
// zeroes the result with VMOVDQU8: SIGILL on an AMD EPYC Zen 2, which has no AVX-512).
PeakResult measure_peak_and_microkernel(int threads, double seconds_per_point) {
    PeakResult r;
    r.ran = true;
    // Calibrate the peak loop to the time asked for.
    long iters = 1 << 16;
    while (true) {
        const double t0 = now_s();
        peak_one_thread(iters);
        if (now_s() - t0 > seconds_per_point / 4 || iters > (1L << 34)) break;
        iters *= 2;
    }
    iters *= 4;
    const kernels::MicroKernels mk = kernels::microkernels_for(kernels::Backend::avx512);
    r.peak_1t = best_of_3([&] { return peak_one_thread(iters); });
    r.chain_1t = best_of_3([&] { return microkernel_one_thread(mk, true, seconds_per_point); });
    r.product_1t = best_of_3([&] { return microkernel_one_thread(mk, false, seconds_per_point); });
    r.peak_all = best_of_3([&] { return all_threads(threads, [&] { return peak_one_thread(iters); }); });
    r.chain_all = best_of_3(
        [&] { return all_threads(threads, [&] { return microkernel_one_thread(mk, true, seconds_per_point); }); });
    r.product_all = best_of_3(
        [&] { return all_threads(threads, [&] { return microkernel_one_thread(mk, false, seconds_per_point); }); });
    return r;
}

}  // namespace amxblas::bench

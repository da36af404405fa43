// Micro-kernel and GEMM timings on one core (not a test; run by hand, briefly).
// Usage: kernels_bench [--backend=NAME] [N]
//   1. VDPBF16PS peak: 16 independent accumulator chains, no memory operands.
//   2. The backend's product and fp32_chain kernels on one L1-resident 32x32x256 panel,
//      as a fraction of that peak (each 32x32x32 step is 1024 zmm VDPBF16PS).
//   3. Whole calls (1 thread): split/pack vs compute, against OpenBLAS sgemm/dgemm.
#include <immintrin.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cblas.h>

#include "kernels/isa/backend.h"
#include "kernels/runtime/cpu_features.h"
#include "kernels/isa/microkernel.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/runtime/cpu_features.h"
#include "tests/common/blas.h"

using namespace amxblas::kernels;

namespace {

__attribute__((target("avx512f,avx512bf16"))) double peak_dots_per_s() {
    __m512 acc[16];
    for (auto& a : acc) a = _mm512_setzero_ps();
    const __m512i x = _mm512_set1_epi32(0x3F803F80), y = _mm512_set1_epi32(0x3F803F80);  // 1.0 pairs
    const long iters = 20000000;
    const double t0 = omp_get_wtime();
    for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
        for (auto& a : acc) a = _mm512_dpbf16_ps(a, (__m512bh)x, (__m512bh)y);
    }
    const double t = omp_get_wtime() - t0;
    alignas(64) float lanes[16];
    float sink = 0;
    for (auto& a : acc) {
        _mm512_store_ps(lanes, a);
        sink += lanes[0];
    }
    if (sink == 1.2345f) std::printf(" ");  // keeps the loop alive
    return double(iters) * 16 / t;
}

// A 32x32x32 step is 32 rows x 2 zmm (32 columns) x 16 K pairs of VDPBF16PS.
constexpr int kDotsPerStep = 32 * 2 * 16;

double kernel_dots_per_s(const MicroKernels& mk, bool chain) {
    const int ks = kBlockK / kTile;
    std::vector<bf16_t> buf(std::size_t(6) * ks * kStepElems, 0x3F80);
    std::vector<float> c(kStepElems);
    Fp32Panels p;
    for (int s = 0; s < 3; ++s) {
        p.a[s] = buf.data() + std::size_t(s) * ks * kStepElems;
        p.b[s] = buf.data() + std::size_t(s + 3) * ks * kStepElems;
    }
    const int calls = chain ? 4000 : 24000;
    mk.thread_begin();
    const double t0 = omp_get_wtime();
    for (int i = 0; i < calls; ++i) {
        if (chain) mk.fp32_chain(ks, p, c.data(), kTile);
        else mk.product(ks, p.a[0], p.b[0], c.data(), kTile);
    }
    const double t = omp_get_wtime() - t0;
    mk.thread_end();
    return double(calls) * ks * kDotsPerStep * (chain ? 6 : 1) / t;
}

}  // namespace

int main(int argc, char** argv) {
    Backend b = Backend::avx512;
    int n = 1024;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--backend=reference") == 0) b = Backend::reference;
        else if (std::strcmp(argv[i], "--backend=amx") == 0) b = Backend::amx;
        else n = std::atoi(argv[i]);
    }
    if (!backend_usable(b, amxblas::kernels::amx_emulator_present())) {
        std::printf("backend %s cannot run here\n", backend_name(b));
        return 77;
    }
    openblas_set_num_threads(1);
    const MicroKernels mk = microkernels_for(b);
    if (cpu_has_avx512_bf16()) {
        const double peak = peak_dots_per_s();
        std::printf("VDPBF16PS zmm peak: %.2f G/s (%.1f GFLOPS)\n", peak * 1e-9, peak * 64e-9);
        const double prod = kernel_dots_per_s(mk, false), chain = kernel_dots_per_s(mk, true);
        std::printf("%s product kernel: %.2f G dots/s = %.0f%% of peak\n", backend_name(b), prod * 1e-9, 100 * prod / peak);
        std::printf("%s fp32_chain kernel: %.2f G dots/s = %.0f%% of peak\n", backend_name(b), chain * 1e-9, 100 * chain / peak);
    }
    std::vector<float> af(std::size_t(n) * n, 0.5f), bf(af), cf(af);
    std::vector<double> ad(af.begin(), af.end()), bd(ad), cd(ad);
    for (std::size_t i = 0; i < af.size(); ++i) af[i] = ad[i] = float(int(i * 2654435761u % 1999) - 999) / 1000;
    const double flops = 2.0 * n * n * n;
    double t0 = omp_get_wtime();
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, af.data(), n, bf.data(), n, 0, cf.data(), n);
    std::printf("OpenBLAS sgemm N=%d: %.1f GFLOPS\n", n, flops / (omp_get_wtime() - t0) * 1e-9);
    t0 = omp_get_wtime();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, ad.data(), n, bd.data(), n, 0, cd.data(), n);
    std::printf("OpenBLAS dgemm N=%d: %.1f GFLOPS\n", n, flops / (omp_get_wtime() - t0) * 1e-9);
    RunOptions o;
    o.backend = b;
    o.threads = 1;
    o.amx_emulator = amxblas::kernels::amx_emulator_present();
    PhaseTimes pt;
    o.times = &pt;
    GemmArgs<float> gs{'N', 'N', n, n, n, 1.0f, af.data(), n, bf.data(), n, 0.0f, cf.data(), n};
    if (const char* why = amxblas::kernels::emulate_gemm(gs, o)) std::printf("forwarded: %s\n", why);
    std::printf("%s FP32 N=%d: %.1f GFLOPS (split+pack %.3f s, compute %.3f s)\n", backend_name(b), n,
                flops / (pt.split_pack_s + pt.compute_s) * 1e-9, pt.split_pack_s, pt.compute_s);
    for (int products : {6, 21}) {
        o.fp64_products = products;
        GemmArgs<double> gd{'N', 'N', n, n, n, 1.0, ad.data(), n, bd.data(), n, 0.0, cd.data(), n};
        if (const char* why = amxblas::kernels::emulate_gemm(gd, o)) std::printf("forwarded: %s\n", why);
        std::printf("%s FP64-%d N=%d: %.1f GFLOPS (split+pack %.3f s, compute %.3f s)\n", backend_name(b), products, n,
                    flops / (pt.split_pack_s + pt.compute_s) * 1e-9, pt.split_pack_s, pt.compute_s);
    }
    return 0;
}

// The FP64 split + pack in its phases, timed in one process (not a test; run by hand):
//   amxblas_split_pack_phases N SLICES THREADS REPS [TRANSA TRANSB] [cold]
// Median of REPS after one warm-up, per phase: the exponent scan of op(A) rows and of op(B)
// columns, the split + pack with known exponents, both steps in a row (the whole-operand split a
// routed call's first pass does chunk by chunk: kernels/bf16/fp64_facts.h), the gathers + scaling alone and the split arithmetic alone (on an L1 tile), a memcpy
// of the same bytes, and A then B again into buffers every thread has just read (with 3
// slices, the FP32 pack of the same values too, both ways). "cold": 256 MiB written between
// repetitions, as after a compute phase. Inputs uniform in [-1, 1].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/pack/pack.h"
#include "kernels/isa/split.h"
#include "kernels/runtime/thread_pool.h"
#include "tests/common/rng.h"
#include "tests/kernels/pack/pack_test_entry.h"

using namespace amxblas::kernels;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<double> mins;  // the fastest repetition of each phase, in order

struct Packed {
    std::vector<bf16_t> mem;
    PackedOperand op;
    Packed(int outer, int k, int slices) : mem(packed_slice_elems(outer, k) * slices + 64) {
        op.slices = slices;
        op.panels = round_up_tile(outer) / kTile;
        op.ksteps = round_up_tile(k) / kTile;
        bf16_t* p = reinterpret_cast<bf16_t*>((reinterpret_cast<std::uintptr_t>(mem.data()) + 63) & ~std::uintptr_t(63));
        for (int s = 0; s < slices; ++s) op.slice[s] = p + packed_slice_elems(outer, k) * s;
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: amxblas_split_pack_phases N SLICES THREADS REPS [TRANSA TRANSB] [cold]\n");
        return 2;
    }
    const int n = std::atoi(argv[1]), slices = std::atoi(argv[2]), threads = std::atoi(argv[3]), reps = std::atoi(argv[4]);
    const char ta = argc > 5 ? argv[5][0] : 'N', tb = argc > 6 ? argv[6][0] : 'N';
    const bool cold = argc > 7 && std::string(argv[7]) == "cold";
    amxblas::test::Rng g(5);
    std::vector<double> a(std::size_t(n) * n), b(a.size());
    for (double& v : a) v = g.uniform();
    for (double& v : b) v = g.uniform();
    const OperandView<double> va{ta, n, n, a.data(), n}, vb{tb, n, n, b.data(), n};
    const SplitKernels& sk = split_kernels();
    Packed pa(n, n, slices), pb(n, n, slices);
    std::vector<int> ea(n), eb(n);
    std::vector<unsigned char> za(n), zb(n);
    std::vector<char> junk(std::size_t(256) << 20);
    const auto evict = [&] {
        if (cold) std::memset(junk.data(), int(junk[7]) + 1, junk.size());
    };
    const auto timed = [&](auto f) {
        std::vector<double> t;
        for (int r = 0; r <= reps; ++r) {
            evict();
            const double t0 = now_s();
            f();
            if (r > 0) t.push_back(now_s() - t0);
        }
        mins.push_back(*std::min_element(t.begin(), t.end()));
        return median(t);
    };
    bool nz;
    Fp64Split sa, sb;
    const double in_bytes = 2.0 * 8 * double(n) * n;
    const double out_bytes = 2.0 * slices * 2 * double(round_up_tile(n)) * round_up_tile(n);
    std::printf("N=%d slices=%d threads=%d %c%c%s reps=%d\n", n, slices, threads, ta, tb, cold ? " cold" : "", reps);
    const double scan_a = timed([&] { fp64_outer_exponents(va, true, threads, ea.data(), &nz, za.data()); });
    const double pack_a = timed([&] { split_pack_a_fp64(va, ea.data(), true, &sa, pa.op, sk, threads); });
    const auto both_a = [&] {
        fp64_outer_exponents(va, true, threads, ea.data(), &nz, za.data());
        split_pack_a_fp64(va, ea.data(), nz, &sa, pa.op, sk, threads);
    };
    const auto both_b = [&] {
        fp64_outer_exponents(vb, false, threads, eb.data(), &nz, zb.data());
        split_pack_b_fp64(vb, eb.data(), nz, &sb, pb.op, sk, threads);
    };
    const double fused_a = timed(both_a);
    const double scan_b = timed([&] { fp64_outer_exponents(vb, false, threads, eb.data(), &nz, zb.data()); });
    const double pack_b = timed([&] { split_pack_b_fp64(vb, eb.data(), true, &sb, pb.op, sk, threads); });
    const double fused_b = timed(both_b);
    const double fused_ab = timed([&] {
        both_a();
        both_b();
    });
    const double fused_ab_min = mins.back();
    // The same, with the packed buffers first read through by every thread, as a warm routed
    // call finds them after the previous call's compute phase: then each line the pack writes
    // is also held by the other cores, which must give it up first (docs/bench/coherence.txt).
    const auto read_packed = [&] {
        parallel_for(threads, threads, [&](int, int) {
            std::uint64_t x = 0;
            for (const Packed* q : {&pa, &pb}) {
                const char* m = reinterpret_cast<const char*>(q->mem.data());
                for (std::size_t i = 0; i < q->mem.size() * sizeof(bf16_t); i += 64) x += m[i];
            }
            __asm__ volatile("" : : "r"(x));
        });
    };
    const auto after_read = [&](auto f) {
        std::vector<double> t;
        for (int r = 0; r <= reps; ++r) {
            evict();
            read_packed();
            const double t0 = now_s();
            f();
            if (r > 0) t.push_back(now_s() - t0);
        }
        return median(t);
    };
    const double fused_ab_shared = after_read([&] {
        both_a();
        both_b();
    });
    // The FP32 pack of the same values (as floats) into the same buffers, both ways (3 slices).
    double fp32_ab = 0, fp32_ab_shared = 0;
    if (slices == 3) {
        const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
        const OperandView<float> fa{ta, n, n, af.data(), n}, fb{tb, n, n, bf.data(), n};
        const auto pack32 = [&] {
            pack_a_fp32(fa, pa.op, sk, threads);
            pack_b_fp32(fb, pb.op, sk, threads);
        };
        fp32_ab = timed(pack32);
        fp32_ab_shared = after_read(pack32);
    }
    std::vector<double> src(a.size()), dst(a.size() + std::size_t(out_bytes / 16));
    const double mc = timed([&] {
        parallel_for(threads, threads, [&](int w, int) {
            const std::size_t part = a.size() / threads;
            std::memcpy(dst.data() + part * w, a.data() + part * w, part * sizeof(double));
        });
    });
    // The split alone: as many 1024-value blocks as op(A) has, from one L1 tile.
    const int blocks = pa.op.panels * pa.op.ksteps;
    alignas(64) static double tile[kStepElems];
    for (int i = 0; i < kStepElems; ++i) tile[i] = g.uniform();
    const Fp64Scales sc = sa.sc;
    const double split_only = timed([&] {
        parallel_for(threads, threads, [&](int w, int) {
            double mx[kFp64Slices + 1] = {};
            alignas(64) bf16_t o[kFp64Slices][kStepElems];
            bf16_t* d[kFp64Slices];
            for (int s = 0; s < kFp64Slices; ++s) d[s] = o[s];
            for (int q = w; q < blocks; q += threads) sk.fp64(tile, kStepElems, sc, d, mx);
            __asm__ volatile("" : : "r"(&o[0][0]) : "memory");
        });
    });
    std::printf("  sigma v:");
    for (int t = 0; t < sa.sc.active; ++t) std::printf(" %d", ozaki_v(sa.sc.sigma[t]));
    std::printf("  (active %d)\n", sa.sc.active);
    const auto line = [&](const char* what, double s, double bytes) {
        std::printf("  %-34s %8.3f ms  %6.1f GB/s\n", what, 1e3 * s, bytes / s / 1e9);
    };
    const double out1 = out_bytes / 2;
    line("scan A (rows)", scan_a, in_bytes / 2);
    line("split+pack A (exps known)", pack_a, in_bytes / 2 + out1);
    line("scan + split A", fused_a, in_bytes / 2 + out1);
    line("scan B (cols)", scan_b, in_bytes / 2);
    line("split+pack B (exps known)", pack_b, in_bytes / 2 + out1);
    line("scan + split B", fused_b, in_bytes / 2 + out1);
    line("split arithmetic alone, A's blocks", split_only, out1);
    line("memcpy of op(A) (r+w)", mc, in_bytes);
    std::printf("  scan + split A then B: median %.3f ms = %.1f GB/s, fastest %.3f ms = %.1f GB/s (input read once + slices "
                "written, as bench.sh counts)\n",
                1e3 * fused_ab, (in_bytes + out_bytes) / fused_ab / 1e9, 1e3 * fused_ab_min,
                (in_bytes + out_bytes) / fused_ab_min / 1e9);
    std::printf("  scan + split A then B into buffers every thread has just read: median %.3f ms = %.1f GB/s (%.2fx the above)\n",
                1e3 * fused_ab_shared, (in_bytes + out_bytes) / fused_ab_shared / 1e9, fused_ab_shared / fused_ab);
    if (slices == 3) {
        const double b32 = in_bytes / 2 + out_bytes;  // FP32 input: 4 bytes a value
        std::printf("  FP32 pack A then B: median %.3f ms = %.1f GB/s; into buffers every thread has just read: %.3f ms = "
                    "%.1f GB/s (%.2fx)\n",
                    1e3 * fp32_ab, b32 / fp32_ab / 1e9, 1e3 * fp32_ab_shared, b32 / fp32_ab_shared / 1e9,
                    fp32_ab_shared / fp32_ab);
    }
    return 0;
}

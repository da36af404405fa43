// The phases of an FP64 call that AMX would not remove, measured on this machine's code with the
// tile work taken out (bench/no_arith_kernels.h: the whole call runs but the products),
// and part 2 of amxblas_bench_int8 (the INT8 split + pack against memcpy). C is garbage after
// such a call: only its PhaseTimes are read.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "kernels/driver/routed_gemm.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/int8/int8_walk.h"
#include "kernels/isa/backend.h"
#include "kernels/isa/isa.h"
#include "kernels/runtime/cpu_features.h"
#include "bench/bench_int8.h"
#include "bench/bench_int8_phases.h"
#include "bench/no_arith_kernels.h"

namespace amxblas::bench {

const char* untiled_call(const Int8Options& o, kernels::Fp64Engine engine, int products, const Shape& s,
                         const std::vector<double>& a, const std::vector<double>& b, std::vector<double>* c,
                         kernels::PhaseTimes* t, double* wall_s) {
    kernels::RunOptions opt = int8_options(o, engine, products, t, nullptr);
    opt.backend = kernels::Backend::reference;  // the set below stands in for its kernels
    opt.microkernels = &no_arith_kernels();
    c->assign(std::size_t(s.m) * s.n, 0.0);
    const kernels::GemmArgs<double> g{'N', 'N', s.m, s.n, s.k, 1.0, a.data(), s.m, b.data(), s.k, 0.0, c->data(), s.m};
    const double t0 = now_s();
    const char* why = kernels::emulate_gemm(g, opt);
    *wall_s = now_s() - t0;
    return why;
}

double facts_seconds(const Shape& s, const std::vector<double>& a, const std::vector<double>& b, int threads) {
    const kernels::OperandView<double> va{'N', s.m, s.k, a.data(), s.m}, vb{'N', s.k, s.n, b.data(), s.k};
    kernels::Int8OperandFacts fa, fb;
    const double t0 = now_s();
    kernels::int8_operand_facts(va, true, threads, &fa);
    kernels::int8_operand_facts(vb, false, threads, &fb);
    return now_s() - t0;
}

double memcpy_gbs(std::size_t bytes, int threads, int reps) {
    std::vector<char> src(bytes, 1), dst(bytes, 2);
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {  // r = 0 faults the pages in
        const double t0 = now_s();
        std::vector<std::thread> pool;
        const std::size_t part = bytes / threads;
        for (int q = 0; q < threads; ++q)
            pool.emplace_back([&, q] { std::memcpy(dst.data() + q * part, src.data() + q * part, part); });
        for (std::thread& th : pool) th.join();
        if (r > 0) t.push_back(now_s() - t0);
    }
    return 2.0 * double(bytes / threads * threads) / median(t) / 1e9;
}

double int8_split_pack_bytes(const Shape& s, int moduli) {
    const double in = 8.0 * (double(s.m) * s.k + double(s.k) * s.n);
    const double out = double(moduli) * (double(kernels::int8_layer_bytes(s.m, s.k)) + kernels::int8_layer_bytes(s.n, s.k));
    return in + out;
}

void run_int8_split_pack(const Int8Options& o) {
    const std::size_t mc_bytes = (o.quick ? std::size_t(32) : std::size_t(256)) << 20;
    const char* isa = kernels::isa_name(kernels::isa_here());
    std::printf("\n== INT8 split + pack against memcpy (%d threads, alternated, median of %d after a warm-up): the facts "
                "pass + residue split and pack of an INT8 call at auto's count (PhaseTimes::split_pack_s, products "
                "taken out: bench_int8_phases.cc), uniform inputs; this CPU runs the %s build of the residue loops ==\n",
                o.threads, o.reps, isa);
    std::printf("bytes as bench.sh counts them: the FP64 input read once + every INT8 residue buffer written once "
                "(moduli x (ru32(M) + ru32(N)) x ru64(K)); packs A/B: how often the driver packs op(A) and op(B) "
                "(its super-blocks under the 56 MiB budget, kernels/common/int8_chunk_plan.h): the bytes count "
                "each once\n");
    std::printf("%-6s %7s %9s %11s %10s %10s %12s %12s\n", "N", "moduli", "packs_A/B", "sp+pk_ms", "MB", "GB/s", "memcpy_GB/s",
                "target_GB/s");
    for (int n : o.sp_sizes) {
        const Shape s{n, n, n};
        std::vector<double> a, b, c;
        int count = 0;
        long failing = 0;
        if (!uniform_int8_call(n, o.threads, &a, &b, &count, &failing)) {
            std::printf("%-6d INT8 auto does not certify: skipped\n", n);
            continue;
        }
        std::vector<double> sp, mc;
        for (int r = 0; r <= o.reps; ++r) {
            kernels::PhaseTimes t;
            double wall = 0;
            if (const char* why = untiled_call(o, kernels::Fp64Engine::int8, count, s, a, b, &c, &t, &wall)) {
                std::printf("%-6d forwarded: %s\n", n, why);
                break;
            }
            const double m = memcpy_gbs(mc_bytes, o.threads, 1);
            if (r > 0) sp.push_back(t.split_pack_s), mc.push_back(m);
        }
        if (sp.empty()) continue;
        const kernels::Int8Chunking ch = kernels::int8_chunking(n, n, n, count, false, o.threads);
        const int a_packs = kernels::int8_a_packs({ch.mc, ch.nc, ch.kc}, n, n), b_packs = (n + ch.mc - 1) / ch.mc;
        char packs[24];
        std::snprintf(packs, sizeof packs, "%d/%d", a_packs, b_packs);
        const double bytes = int8_split_pack_bytes(s, count), gbs = bytes / median(sp) / 1e9, half = median(mc) / 2;
        std::printf("%-6d %7d %9s %11.3f %10.1f %10.2f %12.2f %12.2f\n", n, count, packs, 1e3 * median(sp), bytes / 1e6, gbs,
                    median(mc), half);
        char what[200];
        std::snprintf(what, sizeof what, "int8 split+pack N=%d (%s loops): %.2f GB/s >= half of memcpy (%.2f GB/s)", n,
                      isa, gbs, half);
        verdict(gbs >= half, what);
    }
}

}  // namespace amxblas::bench

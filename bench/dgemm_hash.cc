// Routed DGEMM results, hashed, for comparing two builds bit for bit; and a timing mode with the
// phase times, for comparing two builds side by side (not a test; run by hand).
//   amxblas_dgemm_hash [--threads T] [--backend B]    one line per problem: inputs, status, FNV-1a
//                                                     of C (5 input kinds x 5 shapes x products
//                                                     6 ... 36 and auto); diff two builds' output
//   amxblas_dgemm_hash --sgemm [--threads T] [--backend B]
//                                                     the same for routed SGEMM (2 input kinds x
//                                                     5 shapes), whose bits, unlike DGEMM's,
//                                                     follow the micro-kernel's FP32 rounding
//   amxblas_dgemm_hash --time N PRODUCTS REPS [--threads T] [--backend B]
//                                                     median of REPS calls after one warm-up:
//                                                     total, compute, reconstruction and its rate
//   --engine int8                                     the INT8 engine (kernels/int8/): moduli 6, 9,
//                                                     12, 14, 16 and auto instead of the BF16
//                                                     products; its bits are the same on every
//                                                     backend too
//   --engine auto                                     the automatic engine, as the library runs
//                                                     AMXBLAS_FP64_ENGINE=auto: auto tries the
//                                                     engines in turn, a fixed count is BF16's
//   --problems P                                      the first P of the 5 shapes only (under the
//                                                     AMX harness, where each tile instruction
//                                                     traps: --backend amx --problems 2)
//   --chunk R C D                                     cut every call into chunks of at most R rows,
//                                                     C columns and D of K (kernels/bf16/chunking.h;
//                                                     rounded up to blocks and panels): the hashes
//                                                     must not change
// Backend avx512 unless --backend (DGEMM's bits are the same on every backend: kernels_gemm_test;
// SGEMM's are the same on reference, avx512 and amx, by the micro-kernel contract).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/isa/backend.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/runtime/cpu_features.h"
#include "tests/common/rng.h"

using namespace amxblas::kernels;
using amxblas::test::Rng;

namespace {

std::uint64_t fnv1a(const void* p, std::size_t n) {
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < n; ++i) {
        h ^= static_cast<const unsigned char*>(p)[i];
        h *= 1099511628211ull;
    }
    return h;
}

struct Problem {
    int m, n, k;
};
constexpr Problem kProblems[] = {{64, 64, 64}, {200, 140, 530}, {257, 300, 513}, {512, 512, 512}, {33, 700, 1000}};

const char* const kKinds[] = {
    "uniform [-1,1]", "2^[-40,40] spread", "1/3 of entries 2^-950 beside O(1)", "2^[-300,300] spread",
    "8-bit O(1) beside 2^-950 (slice shifts below 2^-925)"};

void fill(std::vector<double>& x, int kind, Rng& g) {
    for (double& v : x) {
        if (kind == 0) v = g.uniform();
        else if (kind == 1) v = std::ldexp(g.uniform(), g.below(80) - 40);
        else if (kind == 2) v = g.below(3) == 0 ? std::ldexp(g.uniform(), -950) : g.uniform();
        else if (kind == 3) v = std::ldexp(g.uniform(), g.below(600) - 300);
        else v = g.below(3) == 0 ? std::ldexp(g.uniform(), -950) : std::ldexp(std::round(std::ldexp(g.uniform(), 7)), -7);
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    RunOptions o;
    o.backend = Backend::avx512;
    o.threads = 2;
    std::vector<std::string> args(argv + 1, argv + argc);
    bool sgemm = false;
    int problems = int(std::size(kProblems));
    for (std::size_t i = 0; i < args.size();) {
        if (args[i] == "--threads" && i + 1 < args.size()) {
            o.threads = std::max(1, std::atoi(args[i + 1].c_str()));
            args.erase(args.begin() + i, args.begin() + i + 2);
        } else if (args[i] == "--backend" && i + 1 < args.size()) {
            if (!parse_backend(args[i + 1].c_str(), &o.backend)) {
                std::fprintf(stderr, "amxblas_dgemm_hash: unknown backend %s\n", args[i + 1].c_str());
                return 2;
            }
            args.erase(args.begin() + i, args.begin() + i + 2);
        } else if (args[i] == "--chunk" && i + 3 < args.size()) {
            o.chunk_rows = std::atoi(args[i + 1].c_str());
            o.chunk_cols = std::atoi(args[i + 2].c_str());
            o.chunk_depth = std::atoi(args[i + 3].c_str());
            args.erase(args.begin() + i, args.begin() + i + 4);
        } else if (args[i] == "--engine" && i + 1 < args.size()) {
            if (args[i + 1] != "int8" && args[i + 1] != "bf16" && args[i + 1] != "auto") {
                std::fprintf(stderr, "amxblas_dgemm_hash: --engine bf16, int8 or auto\n");
                return 2;
            }
            o.fp64_engine = args[i + 1] == "int8"   ? Fp64Engine::int8
                            : args[i + 1] == "auto" ? Fp64Engine::automatic
                                                    : Fp64Engine::bf16;
            args.erase(args.begin() + i, args.begin() + i + 2);
        } else if (args[i] == "--problems" && i + 1 < args.size()) {
            problems = std::clamp(std::atoi(args[i + 1].c_str()), 1, problems);
            args.erase(args.begin() + i, args.begin() + i + 2);
        } else if (args[i] == "--sgemm") {
            sgemm = true;
            args.erase(args.begin() + i);
        } else {
            ++i;
        }
    }
    // The AMX backend also runs under the trap-and-emulate harness (amxemu/), when it is preloaded.
    o.amx_emulator = amx_emulator_present();
    if (!backend_usable(o.backend, o.amx_emulator)) {
        std::printf("backend %s cannot run here\n", backend_name(o.backend));
        return 77;
    }
    if (args.empty()) {
        // The kinds inside FP32's range for SGEMM, all five for DGEMM; each problem's inputs
        // from its own seed, so that both modes and every build see the same ones.
        const std::vector<int> counts = sgemm ? std::vector<int>{0}
                                        : o.fp64_engine == Fp64Engine::int8 ? std::vector<int>{6, 9, 12, 14, 16, kFp64Auto}
                                                                            : std::vector<int>{6, 10, 15, 21, 28, 36, kFp64Auto};
        for (int kind = 0; kind < (sgemm ? 2 : 5); ++kind)
            for (int p = 0; p < problems; ++p)
                for (int products : counts) {
                    const Problem& s = kProblems[p];
                    Rng g(kind * 1000 + s.m + s.n + s.k);
                    const int m = s.m, n = s.n, k = s.k;
                    std::vector<double> a(std::size_t(m) * k), b(std::size_t(k) * n), c(std::size_t(m) * n);
                    fill(a, kind, g);
                    fill(b, kind, g);
                    fill(c, 0, g);
                    if (sgemm) {
                        std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), cf(c.begin(), c.end());
                        const GemmArgs<float> gs{'N', 'N', m, n, k, 1.5f, af.data(), m, bf.data(), k, 0.25f, cf.data(), m};
                        const char* why = amxblas::kernels::emulate_gemm(gs, o);
                        std::printf("sgemm %-46s %4dx%4dx%4d: %-22s %016llx\n", kKinds[kind], m, n, k, why ? why : "ok",
                                    static_cast<unsigned long long>(fnv1a(cf.data(), cf.size() * sizeof(float))));
                        continue;
                    }
                    o.fp64_products = products;
                    Fp64AutoReport report;
                    o.fp64_report = &report;
                    const GemmArgs<double> gd{'N', 'N', m, n, k, 1.5, a.data(), m, b.data(), k, 0.25, c.data(), m};
                    const char* why = amxblas::kernels::emulate_gemm(gd, o);
                    std::printf("%-52s %4dx%4dx%4d products %3d: %-22s %016llx", kKinds[kind], m, n, k, products,
                                why ? why : "ok", static_cast<unsigned long long>(fnv1a(c.data(), c.size() * sizeof(double))));
                    // Auto: what ran (the engine, its count, the entries repaired), as the log reports it.
                    if (products == kFp64Auto && !why)
                        std::printf(" engine %s count %d repaired %ld", report.engine == Fp64Engine::int8 ? "int8" : "bf16", report.products,
                                    report.repaired);
                    std::printf("\n");
                }
        return 0;
    }
    if (args.size() != 4 || args[0] != "--time") {
        std::fprintf(stderr, "usage: amxblas_dgemm_hash [--threads T] [--backend B] [--engine E] [--chunk R C D] [--problems P] [--sgemm | --time N PRODUCTS REPS]\n");
        return 2;
    }
    const int n = std::atoi(args[1].c_str()), products = std::atoi(args[2].c_str()), reps = std::max(1, std::atoi(args[3].c_str()));
    Rng g(5);
    std::vector<double> a(std::size_t(n) * n), b(a.size()), c(a.size());
    fill(a, 0, g);
    fill(b, 0, g);
    o.fp64_products = products;
    PhaseTimes pt;
    o.times = &pt;
    std::vector<double> total, compute, recon;
    for (int r = 0; r <= reps; ++r) {
        const GemmArgs<double> gd{'N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n};
        const auto t0 = std::chrono::steady_clock::now();
        if (const char* why = amxblas::kernels::emulate_gemm(gd, o)) {
            std::printf("forwarded: %s\n", why);
            return 1;
        }
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r == 0) continue;  // warm-up
        total.push_back(t);
        compute.push_back(pt.compute_s);
        recon.push_back(pt.reconstruct_s);
    }
    // The values bench_main.cc counts for the model: products x ru32(N)^2 x panels.
    const double cells = double((n + 31) / 32 * 32) * double((n + 31) / 32 * 32), panels = double((n + 255) / 256);
    std::printf("N=%d products=%d threads=%d: total %.1f ms, compute %.1f ms, reconstruction %.2f ms per thread, "
                "%.3g values/s per core, C %016llx\n",
                n, products, o.threads, 1e3 * median(total), 1e3 * median(compute), 1e3 * median(recon),
                products * cells * panels / (median(recon) * o.threads),
                static_cast<unsigned long long>(fnv1a(c.data(), c.size() * sizeof(double))));
    return 0;
}

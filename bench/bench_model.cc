// The whole-call AMX model: what one routed call would cost on AMX, phase by phase, against
// native SGEMM/DGEMM on the same number of cores.
//
//   domain scan      measured here (the policy's check of op(A) and op(B), AVX-512, on the call's
//                    threads), bytes per second per core at the largest N of the run,
//                    extrapolated by the bytes read ((mk + kn) x 4 or 8)
//   split + pack     measured here (avx512 build, this machine), bytes per second per core at
//                    the largest N of the run, each route its own (FP64-21 splits 6 slices,
//                    FP64-6 3), extrapolated by the bytes that route moves (split_pack_bytes)
//   reconstruction   measured here (PhaseTimes::reconstruct_s), values per second per core,
//                    extrapolated by the values added: FP32 ru32(M) ru32(N) (panels - 1) panel
//                    adds; FP64 Np ru32(M) ru32(N) panels widen-adds
//   tile work        the tile-instruction counts (tile_counts, checked against the harness)
//                    at TDPBF16PS 16, TILELOADD 8, TILESTORED 8 cycles, loads and stores
//                    overlapped with the products, 2.0 GHz (bench_amx.cc gives the sources)
//   native GEMM      2 N^3 / (cores x 2.0 GHz x peak x 0.90): peak 64 FP32 or 32 FP64 FLOP per
//                    cycle (two 512-bit FMA ports per Sapphire Rapids core, Intel Optimization
//                    Reference Manual), 90% efficiency (assumption for oneMKL at large N)
// The phases run one after the other (no overlap of the AVX-512 work with the tiles), every
// phase scales with the core count (so the ratio does not depend on it), and the measured
// phases run on an AMX core as fast as on this machine's cores (an assumption: same clock,
// same memory bandwidth per core). The write of C (N^2 values) is left out.
//
// A second ratio replaces the tile model with the paper's own measurement (Figure 6: oneMKL's
// BF16 GEMM reached "roughly four times the SGEMM throughput" for large matrices): BF16 work
// of Np x 2 N^3 FLOP at 4 x the native SGEMM rate. The ideal tile model assumes 1024 BF16 FLOP
// per cycle, 17.8x the native SGEMM model, so the calibrated ratio is the realistic one.
#include <algorithm>
#include <cstdio>
#include <string>

#include "kernels/runtime/cpu_features.h"
#include "bench/bench.h"

namespace amxblas::bench {
namespace {

constexpr double kNativeClockHz = 2.0e9, kNativeEfficiency = 0.90;
constexpr double kSgemmFlopsPerCycle = 64, kDgemmFlopsPerCycle = 32;
constexpr double kFig6Bf16OverSgemm = 4.0;
constexpr int kModelSizes[] = {1024, 2048, 4096, 8192, 16384};
constexpr Route kModelRoutes[] = {Route::fp32, Route::fp64_6, Route::fp64_10, Route::fp64_15, Route::fp64_21};

double ru32(int x) { return double((x + 31) / 32 * 32); }

// The paper's total-runtime speedups: Figure 7 (AMX-FP32 over oneMKL SGEMM, read from the
// labels) and the text on Figure 9 (FP64; the figure has no labels).
std::string paper_ratio(Route r, int n) {
    if (r == Route::fp32) {
        switch (n) {
            case 1024: return "1.70";
            case 2048: return "1.39";
            case 4096: return "1.14";
            case 8192: return "1.16";
            case 16384: return "1.25";
        }
        return "-";
    }
    if (r == Route::fp64_6) return n < 4096 ? "<1" : n == 4096 ? "~1" : n == 16384 ? "~1.7" : ">1";
    if (r == Route::fp64_10) return n <= 8192 ? "<1" : ">1";
    return "<1";
}

}  // namespace

void print_amx_model(const MeasuredPhases& m, int cores, const std::string& csv_path) {
    std::printf("\n== Whole-call AMX model: measured phases (this machine, N = %d, extrapolated) + tile model, "
                "%d cores ==\n", m.from_n, cores);
    std::string sp64;
    for (Route r : kModelRoutes)
        if (route_is_fp64(r)) {
            const auto it = m.sp_bytes_per_core_s_fp64.find(r);
            char b[64];
            std::snprintf(b, sizeof b, "%s%s %.2f", sp64.empty() ? "" : ", ", route_name(r),
                          it == m.sp_bytes_per_core_s_fp64.end() ? 0.0 : it->second / 1e9);
            sp64 += b;
        }
    std::printf("domain scan %.2f / %.2f GB/s per core (FP32 / FP64); split+pack GB/s per core: fp32 %.2f, %s;\n"
                "reconstruction %.3g / %.3g values/s per core\n"
                "(FP32 panel adds / FP64 widen-adds); tile work: TDPBF16PS %.0f, TILELOADD %.0f, TILESTORED %.0f cycles,\n"
                "%.1f GHz; native: %.0f (SGEMM) / %.0f (DGEMM) FLOP/cycle/core at %.0f%%, %.1f GHz. ratio = native / AMX\n"
                "(ideal tile model); ratio_f6 = the same with the tile work at 4x native SGEMM (paper Figure 6).\n"
                "Assumptions and sources: bench/bench_model.cc.\n",
                m.scan_bytes_per_core_s_fp32 / 1e9, m.scan_bytes_per_core_s_fp64 / 1e9,
                m.sp_bytes_per_core_s_fp32 / 1e9, sp64.c_str(), m.recon_values_per_core_s_fp32,
                m.recon_values_per_core_s_fp64, kTdpCycles, kLoadCycles, kStoreCycles, kAmxClockHz / 1e9,
                kSgemmFlopsPerCycle, kDgemmFlopsPerCycle, 100 * kNativeEfficiency, kNativeClockHz / 1e9);
    // The measured phases are only an AMX machine's where they ran the code it runs: every CPU
    // with AMX has AVX-512, so there the split, scan and reconstruction take their AVX-512 paths.
    if (!kernels::cpu_has_avx512_split())
        std::printf("WARNING: no AVX-512 here: the phases above ran the portable (scalar) split, scan and\n"
                    "reconstruction, which no AMX machine runs; the AMX times below are too long and the\n"
                    "ratios too low by an unknown factor. Run this on an AVX-512 machine for the model.\n");
    std::printf("%-6s %-8s %9s %10s %10s %10s %10s %10s %7s %8s %7s  %s\n", "N", "route", "scan_ms", "sp+pk_ms", "recon_ms",
                "tile_ms", "amx_ms", "native_ms", "ratio", "ratio_f6", "paper", "dominant");
    std::FILE* csv = std::fopen(csv_path.c_str(), "w");
    if (csv)
        std::fprintf(csv, "n,route,scan_s,split_pack_s,reconstruct_s,tile_s,amx_s,native_s,ratio,ratio_fig6,paper,dominant\n");
    struct Verdict {
        bool pass;
        std::string text;
    };
    std::vector<Verdict> verdicts;
    for (Route r : kModelRoutes)
        for (int n : kModelSizes) {
            const Shape s{n, n, n};
            const bool fp64 = route_is_fp64(r);
            const auto it = m.sp_bytes_per_core_s_fp64.find(r);
            if (fp64 && it == m.sp_bytes_per_core_s_fp64.end()) continue;  // the route did not run
            const double sp_rate = fp64 ? it->second : m.sp_bytes_per_core_s_fp32;
            const double sp = split_pack_bytes(s, r) / (sp_rate * cores);
            const double scan = 2.0 * n * double(n) * (fp64 ? 8 : 4) /
                                ((fp64 ? m.scan_bytes_per_core_s_fp64 : m.scan_bytes_per_core_s_fp32) * cores);
            const double panels = double((n + 255) / 256);
            const double values = fp64 ? route_products(r) * ru32(n) * ru32(n) * panels : ru32(n) * ru32(n) * (panels - 1);
            const double recon =
                values / ((fp64 ? m.recon_values_per_core_s_fp64 : m.recon_values_per_core_s_fp32) * cores);
            const double tile = tile_seconds(tile_counts(r, s), cores);
            const double flops = 2.0 * n * double(n) * n;
            const double native = flops / (cores * kNativeClockHz * kNativeEfficiency *
                                           (fp64 ? kDgemmFlopsPerCycle : kSgemmFlopsPerCycle));
            const double sgemm_rate = cores * kNativeClockHz * kNativeEfficiency * kSgemmFlopsPerCycle;
            const double tile_f6 = route_products(r) * flops / (kFig6Bf16OverSgemm * sgemm_rate);
            const double amx = scan + sp + recon + tile;
            const double ratio = native / amx, ratio_f6 = native / (scan + sp + recon + tile_f6);
            const char* dom = (sp >= recon && sp >= tile) ? "split+pack" : (recon >= tile ? "reconstruction" : "tile");
            const std::string paper = paper_ratio(r, n);
            std::printf("%-6d %-8s %9.3f %10.3f %10.3f %10.3f %10.3f %10.3f %7.2f %8.2f %7s  %s (%.0f%%)\n", n,
                        route_name(r), 1e3 * scan, 1e3 * sp, 1e3 * recon, 1e3 * tile, 1e3 * amx, 1e3 * native, ratio, ratio_f6, paper.c_str(), dom,
                        100 * std::max({sp, recon, tile}) / amx);
            if (csv)
                std::fprintf(csv, "%d,%s,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.4f,%.4f,%s,%s\n", n, route_name(r), scan, sp, recon, tile,
                             amx, native, ratio, ratio_f6, paper.c_str(), dom);
            const double target = r == Route::fp32 ? 1.5 : r == Route::fp64_21 ? 1.0 : 0;
            if (target == 0 || n < 2048) continue;
            char b[400];
            if (ratio >= target) {
                std::snprintf(b, sizeof b, "model %s N=%d: %.2fx native >= %.1fx (Figure-6 tile rate: %.2fx)",
                              route_name(r), n, ratio, target, ratio_f6);
            } else {
                // What the call may take to reach the target, and what stands in the way.
                const double budget = native / target;
                std::snprintf(b, sizeof b,
                              "model %s N=%d: %.2fx native < %.1fx: the call may take %.1f ms, it takes %.1f "
                              "(scan %.1f, split+pack %.1f, reconstruction %.1f, tile %.1f); %s",
                              route_name(r), n, ratio, target, 1e3 * budget, 1e3 * amx, 1e3 * scan, 1e3 * sp, 1e3 * recon,
                              1e3 * tile,
                              tile >= budget ? "the tile work alone exceeds it"
                                             : (std::string("cut scan + split+pack + reconstruction by ") +
                                                std::to_string(int(100 * (amx - budget) / (scan + sp + recon))) + "%")
                                                   .c_str());
            }
            verdicts.push_back({ratio >= target, b});
        }
    if (csv) std::fclose(csv);
    // Without AVX-512 the model's phases are not an AMX machine's (above): no verdict.
    const bool judged = kernels::cpu_has_avx512_split();
    for (const Verdict& v : verdicts)
        std::printf("%s  %s\n", !judged ? "not judged (no AVX-512 here):" : v.pass ? "PASS" : "MISS", v.text.c_str());
}

}  // namespace amxblas::bench

// Part 3 of amxblas_bench_int8: the whole-call AMX model of the INT8 FP64 engine, built as the
// BF16 one (bench_model.cc, bench_amx.cc), beside BF16 auto's, against native DGEMM.
//
//   tile work        the TDPBSSD / TILELOADD / TILESTORED counts of one call (int8_tile_counts,
//                    checked exactly against the trap harness by --amx-counts) at the same rates
//                    as bench_amx.cc's TDPBF16PS: one TDPBSSD (16 x 16 x 64 MACs) per 16 cycles
//                    (Intel Optimization Reference Manual, AMX chapter: TDPBSSD and TDPBF16PS
//                    share the instruction rate; 2048 INT8 ops per cycle), TILELOADD and
//                    TILESTORED 8 cycles (assumption), loads and stores overlapped with the
//                    products, 2.0 GHz (kAmxClockHz: assumption for the paper's Xeon 8462Y+).
//                    Layers: the moduli auto picks plus the magnitude product (plus a second
//                    magnitude pass when some entry is repaired).
//   a third          the products at a third of the ideal rate (ratio3): the paper's FP64-6
//                    reached 1.72x oneMKL DGEMM with 6 BF16 products, so they ran at 6 x 1.72 >=
//                    10x DGEMM's rate, about a third of the ideal tile rate's 32x.
//   Figure-6 rate    the paper's measured BF16 GEMM rate, "roughly four times the SGEMM
//                    throughput" (bench_model.cc's kFig6Bf16OverSgemm), scaled as the ideal
//                    rates are: TDPBSSD does twice TDPBF16PS's MACs at its instruction rate, so
//                    INT8 work at 8 x the native SGEMM model (the same 22.5% of the ideal tile
//                    rate). Only the products change; every other phase is as above.
//   other phases     measured on this machine with the products taken out
//                    (bench_int8_phases.cc): the facts pass (alone), the residue split + pack
//                    (split_pack_s less the facts), the certificate without its product's
//                    tiles (magnitude pack, INT32 -> FP64 adds, the per-entry test), and the
//                    reconstruction (compute_s: the tile -> accumulator adds and the CRT), at
//                    the model's N directly, on `threads` threads = the model's cores.
//   native DGEMM     2 N^3 / (cores x 2.0 GHz x 32 FLOP/cycle x 0.90), as bench_model.cc.
//   BF16 auto        bench_fp64_auto.cc's model: P products' tiles + one for the lower bound,
//                    split + pack of its slices and norms, certificate and reconstruction
//                    measured the same way; P = --bf16-products (default 21: what BF16 auto
//                    picked at N = 2048 uniform in docs/bench/bench.log; the same bits on every
//                    backend; assumed also at N = 4096).
// The phases are assumed to run one after the other and as fast on an AMX core as here.
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/common/int8_chunk_plan.h"
#include "kernels/driver/gemm_sample.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/int8/int8_walk.h"
#include "kernels/isa/backend.h"
#include "kernels/isa/isa.h"
#include "kernels/runtime/cpu_features.h"
#include "amxemu/amxemu.h"
#include "bench/bench_int8.h"
#include "bench/bench_int8_phases.h"

namespace amxblas::bench {
namespace {

constexpr double kTdpbssdCycles = kTdpCycles;  // the same instruction rate as TDPBF16PS
constexpr double kNativeHz = 2.0e9, kNativeEff = 0.90, kDgemmFpc = 32, kSgemmFpc = 64;
constexpr double kFig6Bf16OverSgemm = 4.0;                 // bench_model.cc
constexpr double kFig6Int8OverSgemm = 2 * kFig6Bf16OverSgemm;  // twice the MACs per instruction

double tile_s(const Int8TileCounts& c, int cores) {
    return std::max(kTdpbssdCycles * c.tdpbssd, kLoadCycles * c.tileloadd + kStoreCycles * c.tilestored) /
           (cores * kAmxClockHz);
}

}  // namespace

Int8TileCounts int8_tile_counts(int m, int n, int k, int moduli, int magnitude_passes, int threads) {
    const double tiles = double((m + 31) / 32) * ((n + 31) / 32);
    Int8TileCounts c;
    // One pass of `layers` products, K cut as the driver's plan cuts it (int8_chunk_plan.h).
    const auto pass = [&](int layers, bool sums) {
        const int kc = kernels::plan_int8_chunks(m, n, k, layers, sums, threads).kc;
        double steps = 0, calls = 0;
        for (int k0 = 0; k0 < k; k0 += kc) {
            const int s = (std::min(kc, k - k0) + 63) / 64;
            steps += s;
            calls += (s + kernels::kInt8PanelSteps - 1) / kernels::kInt8PanelSteps;  // steps per micro-kernel call
        }
        c.tdpbssd += 4 * tiles * layers * steps;
        c.tilestored += 4 * tiles * layers * calls;
    };
    pass(moduli, false);
    for (int q = 0; q < magnitude_passes; ++q) pass(1, true);
    c.tileloadd = c.tdpbssd;
    c.tilezero = c.tilestored;
    return c;
}

bool int8_auto_decision(const Shape& s, const std::vector<double>& a, const std::vector<double>& b, int threads,
                        int* count, long* failing) {
    const kernels::OperandView<double> va{'N', s.m, s.k, a.data(), s.m}, vb{'N', s.k, s.n, b.data(), s.k};
    kernels::Int8OperandFacts fa, fb;
    if (kernels::int8_operand_facts(va, true, threads, &fa) || kernels::int8_operand_facts(vb, false, threads, &fb))
        return false;
    // The digits of int8_pack.cc's pack_int8_magnitudes, row-major, so that lhat comes out
    // row-major as Int8BlockCertificate::add_block reads it.
    std::vector<double> da(std::size_t(s.m) * s.k), db(std::size_t(s.k) * s.n), l(std::size_t(s.m) * s.n);
    for (int i = 0; i < s.m; ++i)
        for (int q = 0; q < s.k; ++q)
            da[std::size_t(i) * s.k + q] = std::min(127.0, std::floor(std::ldexp(std::fabs(a[i + std::size_t(q) * s.m]), 7 - fa.e[i])));
    for (int q = 0; q < s.k; ++q)
        for (int j = 0; j < s.n; ++j)
            db[std::size_t(q) * s.n + j] = std::min(127.0, std::floor(std::ldexp(std::fabs(b[q + std::size_t(j) * s.k]), 7 - fb.e[j])));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, da.data(), s.k, db.data(), s.n, 0.0, l.data(), s.n);
    kernels::Int8BlockCertificate cert;
    if (!cert.begin(fa, fb, s.k, 1.0, kernels::kInt8MinModuli, {})) return false;
    cert.add_block(0, 0, s.m, s.n, l.data(), std::size_t(s.n));
    kernels::Int8Decision d;
    cert.decide(&d);
    *count = d.count;
    *failing = d.failing;
    return d.count > 0;
}

bool uniform_int8_call(int n, int threads, std::vector<double>* a, std::vector<double>* b, int* count, long* failing) {
    const Shape s{n, n, n};
    make_inputs(InputClass::uniform, s, 3, a, b);
    return int8_auto_decision(s, *a, *b, threads, count, failing);
}

int run_int8_amx_counts(const Int8Options& o) {
    using CountersFn = void (*)(amxemu_counts*);
    using ResetFn = void (*)();
    auto counters = reinterpret_cast<CountersFn>(dlsym(RTLD_DEFAULT, "amxemu_counters"));
    auto reset = reinterpret_cast<ResetFn>(dlsym(RTLD_DEFAULT, "amxemu_reset_counters"));
    std::printf("\n== INT8 AMX tile-instruction counts (trap harness), INT8 auto, uniform, %d threads ==\n", o.threads);
    if (!counters || !reset || !kernels::backend_built(kernels::Backend::amx)) {
        std::printf("AMX harness not loaded or AMX backend not built: counts skipped.\n");
        return 0;
    }
    const int n = o.amx_counts_n;
    // The square call, and one whose edges are partial tiles and whose K spans two chunks
    // (4096 + 104) and several micro-kernel panels (kInt8PanelSteps).
    const Shape shapes[] = {{n, n, n}, {n + 37, n / 2 + 5, 4200}};
    std::printf("%-16s %7s %10s %10s %10s %10s   formula (layers = moduli + magnitude passes, + the sample's)\n", "MxNxK", "layers",
                "tdpbssd", "tileloadd", "tilestored", "tilezero");
    bool all = true;
    for (const Shape& s : shapes) {
        std::vector<double> a, b, c(std::size_t(s.m) * s.n);
        make_inputs(InputClass::uniform, s, 5, &a, &b);
        kernels::RunOptions opt = int8_options(o, kernels::Fp64Engine::int8, kernels::kFp64Auto, nullptr, nullptr);
        kernels::Fp64AutoReport rep;
        opt.fp64_report = &rep;
        opt.backend = kernels::Backend::amx;
        opt.amx_emulator = kernels::amx_emulator_present();
        reset();
        const kernels::GemmArgs<double> g{'N', 'N', s.m, s.n, s.k, 1.0, a.data(), s.m, b.data(), s.k, 0.0, c.data(), s.m};
        if (const char* why = kernels::emulate_gemm(g, opt)) {
            std::printf("%dx%dx%d forwarded: %s\n", s.m, s.n, s.k, why);
            all = false;
            continue;
        }
        amxemu_counts h{};
        counters(&h);
        const int passes = rep.repaired > 0 ? 2 : 1, layers = rep.products + passes;
        Int8TileCounts f = int8_tile_counts(s.m, s.n, s.k, rep.products, passes, opt.threads);
        // Auto certifies a sample of the call first (kernels/driver/gemm_sample.h), on one
        // thread: on these inputs none of its entries fails, so it runs the INT8 certificate's
        // magnitude product of r x c x K (routed_gemm.cc sample_uncertified).
        kernels::GemmSample<double> sample;
        if (kernels::sample_gemm(g, opt, &sample)) {
            const Int8TileCounts sc = int8_tile_counts(sample.args.m, sample.args.n, s.k, 0, 1, 1);
            f.tdpbssd += sc.tdpbssd, f.tileloadd += sc.tileloadd, f.tilestored += sc.tilestored, f.tilezero += sc.tilezero;
        }
        const bool same = f.tdpbssd == double(h.tdpbssd) && f.tileloadd == double(h.tileloadd + h.tileloaddt1) &&
                          f.tilestored == double(h.tilestored) && f.tilezero == double(h.tilezero) && h.tdpbf16ps == 0;
        all = all && same;
        char shape[48];
        std::snprintf(shape, sizeof shape, "%dx%dx%d", s.m, s.n, s.k);
        std::printf("%-16s %7d %10llu %10llu %10llu %10llu   %.0f %.0f %.0f %.0f (%d moduli + magnitudes)%s\n", shape, layers,
                    (unsigned long long)h.tdpbssd, (unsigned long long)(h.tileloadd + h.tileloaddt1),
                    (unsigned long long)h.tilestored, (unsigned long long)h.tilezero, f.tdpbssd, f.tileloadd, f.tilestored,
                    f.tilezero, rep.products, same ? "" : "  DIFFERENT");
    }
    verdict(all, "the INT8 model's tile-count formula (bench_int8_model.cc int8_tile_counts) equals the harness's counts");
    return 0;
}

void run_int8_model(const Int8Options& o) {
    const int cores = o.threads;
    std::printf("\n== Whole-call AMX model, INT8 auto beside BF16 auto, against native DGEMM (%d cores; phases measured "
                "here at each N on %d threads, products taken out, median of %d after a warm-up) ==\n",
                cores, o.threads, o.reps);
    std::printf("tiles: TDPBSSD / TDPBF16PS %.0f cycles, TILELOADD %.0f, TILESTORED %.0f, overlapped, %.1f GHz; Figure-6 "
                "rate: BF16 at %.0fx, INT8 at %.0fx the native SGEMM model; native DGEMM %.0f FLOP/cycle/core at %.0f%%, "
                "%.1f GHz; BF16 auto at %d products. Assumptions and sources: bench/bench_int8_model.cc.\n",
                kTdpbssdCycles, kLoadCycles, kStoreCycles, kAmxClockHz / 1e9, kFig6Bf16OverSgemm, kFig6Int8OverSgemm,
                kDgemmFpc, 100 * kNativeEff, kNativeHz / 1e9, o.bf16_products);
    const bool avx512_code = kernels::cpu_has_avx512_split();
    if (!avx512_code)
        std::printf("WARNING: no AVX-512 here: the per-instruction-set loops (facts, residues, folds, reconstruction, "
                    "the certificate's row test) ran their %s build, not the avx512 one every AMX machine runs (the "
                    "gathers are the same code everywhere); the phases are too long, so the ratios to native DGEMM are low (a PASS "
                    "holds a fortiori, a MISS is not conclusive), and auto against a fixed call may go either way.\n",
                    kernels::isa_name(kernels::isa_here()));
    std::printf("rest_ms: the phases other than the tiles (facts, split + pack, certificate, reconstruction); ratio: "
                "native DGEMM's time over the modelled call's at the ideal tile rate, ratio3 at a third of it (the rate "
                "the paper's FP64-6 result implies), ratio_f6 at the Figure-6 rate; packs A/B: how often the plan "
                "splits op(A) and op(B) (kernels/common/int8_chunk_plan.h)\n");
    std::printf("%-5s %-5s %6s %8s %9s %9s %9s %9s %9s %9s %9s %7s %7s %8s %7s  %s\n", "N", "eng", "count", "facts_ms",
                "sp+pk_ms", "cert_ms", "recon_ms", "rest_ms", "tile_ms", "amx_ms", "native_ms", "ratio", "ratio3", "ratio_f6",
                "packs", "dominant (ideal)");
    // Per N, INT8 auto's: the rest, the tiles, the ratios (the cross-size targets below).
    struct Row {
        int n;
        double rest, tile, ratio, ratio3;
    };
    std::vector<Row> rows;
    for (int n : o.model_sizes) {
        const Shape s{n, n, n};
        std::vector<double> a, b, c;
        int count = 0;
        long failing = 0;
        if (!uniform_int8_call(n, o.threads, &a, &b, &count, &failing)) {
            std::printf("%-5d int8 auto does not certify: no model\n", n);
            continue;
        }
        const int p = o.bf16_products;
        // Alternated: INT8 at auto's count, INT8 auto (its certificate), BF16 at P, BF16 auto.
        std::vector<double> facts, sp8, cert8, rec8, sp16, spa16, cert16, rec16;
        bool ok8 = true, ok16 = true, okc16 = true;
        for (int r = 0; r <= o.reps; ++r) {
            kernels::PhaseTimes t[4];
            double w = 0;
            const double fs = facts_seconds(s, a, b, o.threads);
            ok8 = ok8 && !untiled_call(o, kernels::Fp64Engine::int8, count, s, a, b, &c, &t[0], &w) &&
                  !untiled_call(o, kernels::Fp64Engine::int8, kernels::kFp64Auto, s, a, b, &c, &t[1], &w);
            ok16 = ok16 && !untiled_call(o, kernels::Fp64Engine::bf16, p, s, a, b, &c, &t[2], &w);
            okc16 = okc16 && !untiled_call(o, kernels::Fp64Engine::bf16, kernels::kFp64Auto, s, a, b, &c, &t[3], &w);
            if (r == 0) continue;
            facts.push_back(fs);
            sp8.push_back(t[0].split_pack_s), rec8.push_back(t[0].compute_s), cert8.push_back(t[1].certificate_s);
            sp16.push_back(t[2].split_pack_s), rec16.push_back(t[2].compute_s);
            spa16.push_back(t[3].split_pack_s), cert16.push_back(t[3].certificate_s);
        }
        const double flops = 2.0 * n * double(n) * n;
        const double native = flops / (cores * kNativeHz * kNativeEff * kDgemmFpc);
        const double sgemm_rate = cores * kNativeHz * kNativeEff * kSgemmFpc;
        double ratio8 = 0, ratio8_f6 = 0, auto_over_fixed = 0;
        if (ok8) {
            const int passes = failing > 0 ? 2 : 1, layers = count + passes;
            const double tile = tile_s(int8_tile_counts(n, n, n, count, passes, o.threads), cores);
            const double tile6 = layers * flops / (kFig6Int8OverSgemm * sgemm_rate);
            const double f = median(facts), sp = median(sp8) - f, ce = median(cert8), re = median(rec8);
            const double rest = f + sp + ce + re, amx = rest + tile;
            ratio8 = native / amx, ratio8_f6 = native / (rest + tile6);
            const double ratio3 = native / (rest + 3 * tile);
            rows.push_back({n, rest, tile, ratio8, ratio3});
            const double parts[] = {f, sp, ce, re, tile};
            const char* names[] = {"facts", "split+pack", "certificate", "reconstruction", "tile"};
            const int d = int(std::max_element(parts, parts + 5) - parts);
            const kernels::Int8ChunkPlan plan = kernels::plan_int8_chunks(n, n, n, count, false, o.threads);
            char packs[32];
            std::snprintf(packs, sizeof packs, "%d/%d", kernels::int8_a_packs(plan, n, n), (n + plan.mc - 1) / plan.mc);
            std::printf("%-5d %-5s %6d %8.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f %8.2f %7s  %s (%.0f%%)\n",
                        n, "int8", count, 1e3 * f, 1e3 * sp, 1e3 * ce, 1e3 * re, 1e3 * rest, 1e3 * tile, 1e3 * amx,
                        1e3 * native, ratio8, ratio3, ratio8_f6, packs, names[d], 100 * parts[d] / amx);
            std::printf("      int8: %d layers (%d moduli + %d magnitude pass%s), %s entries repaired; the magnitude product "
                        "is %.1f%% of the tile work, the certificate with it %.1f%% of the modelled call\n",
                        layers, count, layers - count, layers - count > 1 ? "es" : "", failing ? "some" : "no",
                        100.0 / layers, 100 * (ce + tile / layers) / amx);
            // A fixed call of the same count: the same facts, split, products and reconstruction,
            // without the certificate and its magnitude pass(es).
            auto_over_fixed = amx / (amx - ce - tile * (layers - count) / layers);
            std::printf("      int8: auto takes %.3fx a fixed call of the %d moduli it picks\n", auto_over_fixed, count);
        } else {
            std::printf("%-5d int8  a call was forwarded: no model\n", n);
        }
        if (ok16 && okc16) {
            // bench_amx.cc's BF16 counts are linear in the products (bench_fp64_auto.cc's model).
            const TileCounts tc = tile_counts(Route::fp64_21, s);
            const double tile = tile_seconds(tc, cores) * (p + 1) / 21.0;
            const double tile6 = (p + 1) * flops / (kFig6Bf16OverSgemm * sgemm_rate);
            const double sp = median(spa16), ce = median(cert16), re = median(rec16);
            const double rest = sp + ce + re, amx = rest + tile;
            const double parts[] = {sp, ce, re, tile};
            const char* names[] = {"split+pack", "certificate", "reconstruction", "tile"};
            const int d = int(std::max_element(parts, parts + 4) - parts);
            std::printf("%-5d %-5s %6d %8s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f %8.2f %7s  %s (%.0f%%)\n", n,
                        "bf16", p, "-", 1e3 * sp, 1e3 * ce, 1e3 * re, 1e3 * rest, 1e3 * tile, 1e3 * amx, 1e3 * native,
                        native / amx, native / (rest + 3 * tile), native / (rest + tile6), "-", names[d],
                        100 * parts[d] / amx);
        } else {
            std::printf("%-5d bf16  a call was forwarded: no model\n", n);
        }
        if (!ok8 || n < 2048) continue;
        char what[240];
        // The ideal-rate targets: 2.0x at 2048, 2.5x at 4096, 2.8x from 8192 on.
        const double ideal_target = n < 4096 ? 2.0 : n < 8192 ? 2.5 : 2.8;
        std::snprintf(what, sizeof what, "model int8 auto N=%d (%d moduli): %.2fx native DGEMM, target >= %.1fx (ideal tile rate)",
                      n, count, ratio8, ideal_target);
        verdict(ratio8 >= ideal_target, what);
        if (n >= 4096) {
            std::snprintf(what, sizeof what,
                          "model int8 auto N=%d (%d moduli): %.2fx native DGEMM, target >= 1.0x (a third of the ideal tile rate)",
                          n, count, rows.back().ratio3);
            verdict(rows.back().ratio3 >= 1.0, what);
        }
        std::snprintf(what, sizeof what, "model int8 auto N=%d: %.3fx a fixed call of the %d moduli it picks, target <= 1.10",
                      n, auto_over_fixed, count);
        verdict(auto_over_fixed <= 1.10, what);
    }
    // Across sizes: the rest grows about as N^2 from 2048 to 4096 (target at most 4.5x) and stays
    // within the tile time there; the ratio does not fall as N grows.
    for (std::size_t i = 0; i < rows.size(); ++i) {
        char what[240];
        for (std::size_t j = 0; j < rows.size(); ++j)
            if (rows[i].n == 2048 && rows[j].n == 4096) {
                std::snprintf(what, sizeof what, "model int8 auto: the rest at N=4096 is %.2fx that at N=2048, target <= 4.5x",
                              rows[j].rest / rows[i].rest);
                verdict(rows[j].rest <= 4.5 * rows[i].rest, what);
            }
        if (rows[i].n == 4096) {
            std::snprintf(what, sizeof what, "model int8 auto N=4096: the rest %.1f ms, the tiles %.1f ms, target rest <= tiles",
                          1e3 * rows[i].rest, 1e3 * rows[i].tile);
            verdict(rows[i].rest <= rows[i].tile, what);
        }
        if (i > 0) {
            std::snprintf(what, sizeof what, "model int8 auto: %.2fx at N=%d after %.2fx at N=%d, target non-decreasing in N",
                          rows[i].ratio, rows[i].n, rows[i - 1].ratio, rows[i - 1].n);
            verdict(rows[i].ratio >= rows[i - 1].ratio, what);
        }
    }
}

}  // namespace amxblas::bench

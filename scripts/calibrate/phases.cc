#include "scripts/calibrate/phases.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "scripts/calibrate/least_squares.h"
#include "scripts/calibrate/routed_call.h"

namespace amxblas::calibrate {

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int field(const char* name) {
    for (int i = 0; i < kCostFieldCount; ++i)
        if (std::string(kCostFields[i].name) == name) return i;
    return -1;
}

// Sets a measured constant (a positive, finite value only: a phase that took no time gives none;
// `zero_ok`: a term the fit found to be nothing, 0, as a per-tile cost may be).
void put(PhaseResult* r, const char* name, double v, bool zero_ok = false) {
    const int i = field(name);
    if (i < 0 || !(v > 0 || (zero_ok && v == 0)) || !std::isfinite(v)) return;
    r->constants.*kCostFields[i].member = v;
    r->measured |= 1ULL << i;
}

struct RouteSpec {
    const char* name;   // the suffix of its constants: fp32, fp64, int8
    int routine;        // 0 SGEMM, 1 DGEMM
    Fp64Route fp64;
};

// One shape's median run and the model's counts for it.
struct Row {
    PhaseShape s;
    RoutedRun run;
    CostPrediction counts;
};

}  // namespace

std::vector<PhaseShape> phase_shapes(kernels::Backend b) {
    // Every shape has at least four of the driver's output blocks (64 x 64 at the least), so
    // that each thread works as in the calls that route: a shape one thread computes alone ran
    // 1.7x faster per step than the sweep's on a 2-core machine whose other core another job
    // held, and the rates it gave predicted the portable backend's calls 42% short.
    const int d = b == kernels::Backend::reference ? 128 : 256;
    return {{d, d, d},         {2 * d, 2 * d, 2 * d}, {2 * d, d, d / 4},     {d, d, 4 * d},        {d, 2 * d, d / 8},
            {3 * d / 2, d, d}, {d, 3 * d / 2, d / 2}, {2 * d, d / 2, 2 * d}, {4 * d, d / 2, d}};
}

PhaseResult measure_phases(kernels::Backend b, int threads, int rounds, const CostConstants& builtin) {
    const auto start = std::chrono::steady_clock::now();
    PhaseResult result;
    result.constants = builtin;
    const RouteSpec routes[] = {{"fp32", 0, {}},
                                {"fp64", 1, {kernels::Fp64Engine::bf16, 6}},
                                {"int8", 1, {kernels::Fp64Engine::int8, 16}}};
    const std::vector<PhaseShape> shapes = phase_shapes(b);
    ShapeOperands ops;
    for (const RouteSpec& route : routes) {
        // Rounds over the shapes, round 0 the warm-up; each shape's median run.
        std::vector<std::vector<RoutedRun>> runs(shapes.size());
        for (int round = 0; round <= rounds; ++round)
            for (std::size_t i = 0; i < shapes.size(); ++i) {
                const RoutedRun r = ops.run(route.routine, shapes[i].m, shapes[i].n, shapes[i].k, b, threads, route.fp64);
                if (round > 0 && !r.forwarded) runs[i].push_back(r);
            }
        std::vector<Row> rows;
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            if (runs[i].empty()) continue;
            std::sort(runs[i].begin(), runs[i].end(), [](const RoutedRun& x, const RoutedRun& y) { return x.seconds < y.seconds; });
            CostInput in;
            in.precision = route.routine == 0 ? kernels::Precision::fp32 : kernels::Precision::fp64;
            in.m = shapes[i].m, in.n = shapes[i].n, in.k = shapes[i].k;
            in.products = route.routine == 0 ? 6 : route.fp64.products;
            const kernels::Variant* v = route.routine == 0 ? &kernels::kVariants[0] : kernels::fp64_variant(route.fp64.products);
            in.slices = v ? v->slices : kernels::kFp64Slices;
            in.engine = route.fp64.engine == kernels::Fp64Engine::int8 ? kernels::Fp64Engine::int8 : kernels::Fp64Engine::bf16;
            in.backend = b;
            in.threads = threads;
            rows.push_back({shapes[i], runs[i][runs[i].size() / 2], predict_cost(in, builtin)});
        }
        if (rows.empty()) {
            result.notes.push_back(std::string(route.name) + ": every call was forwarded; nothing measured");
            continue;
        }
        const std::string pre = route.name;
        const bool int8 = pre == "int8";
        std::vector<double> split, recon, scan;
        std::vector<std::vector<double>> f;  // the products' (and INT8's reconstruction's) fit
        std::vector<double> t;
        for (const Row& row : rows) {
            const kernels::PhaseTimes& ph = row.run.phases;
            const CostPrediction& c = row.counts;
            // The busiest thread's share of the blocks: the per-core rates are of its work.
            const double share = std::ceil(double(c.blocks) / threads) / double(c.blocks);
            if (ph.split_pack_s > 0) split.push_back(c.split_pack_bytes / (ph.split_pack_s * threads));
            if (!int8 && ph.reconstruct_s > 0) recon.push_back(c.recon_values * share / ph.reconstruct_s);
            if (pre == "fp32" && row.run.scan_s > 0) scan.push_back(c.scan_bytes / (row.run.scan_s * threads));
            const double steps_per_tile = std::ceil(row.s.k / (int8 ? 64.0 : 32.0));
            if (int8) {
                // compute = (steps step_s + values / recon_rate) x share: the reconstruction is
                // inside compute_s, told apart by how it scales (with M N, not with K).
                f.push_back({c.product_steps * share, (c.recon_values + c.fold_values) * share});
                t.push_back(ph.compute_s);
            } else if (b == kernels::Backend::amx) {
                f.push_back({c.product_steps * share});  // tile instructions: no per-tile term
                t.push_back(ph.compute_s - ph.reconstruct_s);
            } else {
                f.push_back({c.product_steps * share, c.product_steps / steps_per_tile * share});
                t.push_back(ph.compute_s - ph.reconstruct_s);
            }
        }
        const std::vector<double> x = relative_nnls(f, t);
        put(&result, ("step_s_" + pre).c_str(), x[0]);
        if (int8) put(&result, "recon_values_s_int8", x[1] > 0 ? 1 / x[1] : 0);
        else if (b != kernels::Backend::amx) put(&result, ("tile_s_" + pre).c_str(), x[1], true);
        put(&result, ("split_pack_bytes_s_" + pre).c_str(), median(split));
        if (!int8) put(&result, ("recon_values_s_" + pre).c_str(), median(recon));
        if (pre == "fp32") put(&result, "scan_bytes_s", median(scan));

        char note[256];
        std::snprintf(note, sizeof note, "%s: %zu shapes, median call %.3f ms, step %.0f ns, split + pack %.2f GB/s", route.name,
                      rows.size(), 1e3 * median([&] {
                          std::vector<double> v;
                          for (const Row& row : rows) v.push_back(row.run.seconds);
                          return v;
                      }()),
                      1e9 * x[0], 1e-9 * median(split));
        result.notes.push_back(note);
    }
    // The per-call overhead: what a small call (64^3 FP32, one block) takes beyond the phases
    // the rates just measured predict for it. The large shapes' own remainders (their time less
    // their PhaseTimes) miss what a call pays before and after its phases, which is what
    // decides the small calls: with them, 64^3 calls were routed against netlib's BLAS at 1.25x
    // its time.
    {
        CostInput in;
        in.m = in.n = in.k = 64;
        in.backend = b;
        in.threads = threads;
        std::vector<double> t;
        for (int round = 0; round <= rounds; ++round) {
            const RoutedRun r = ops.run(0, 64, 64, 64, b, threads, {});
            if (round > 0 && !r.forwarded) t.push_back(r.seconds);
        }
        const CostPrediction p = predict_cost(in, result.constants);
        if (!t.empty()) put(&result, "overhead_s", std::max(median(t) - (p.routed_s - p.overhead_s), 1e-7));
    }
    // AMX: the products are the tile instructions' (the model's max of TDPBF16PS and the loads
    // and stores); their measured time gives TDPBF16PS's cycles at the built-in clock.
    if (b == kernels::Backend::amx) {
        const int i = field("step_s_fp32");
        if (result.measured >> i & 1) {
            // A product step is 4 TDPBF16PS (policy/cost_model.cc), taken to bound it.
            put(&result, "tdp_cycles", result.constants.step_s_fp32 * builtin.clock_hz / 4);
            result.measured &= ~(1ULL << i);
            result.constants.step_s_fp32 = builtin.step_s_fp32;
        }
        result.measured &= ~(1ULL << field("step_s_fp64")) & ~(1ULL << field("step_s_int8"));
        result.constants.step_s_fp64 = builtin.step_s_fp64;
        result.constants.step_s_int8 = builtin.step_s_int8;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace amxblas::calibrate

// amxblas_chunk_model: what the bounded-memory driver costs over splitting whole operands, in
// the AMX cost model (policy/cost_model.h), for issue 28's speed target (each route at most
// 1.05x) where no machine here can time AMX. Per route and N: the model's routed time with the
// driver's chunk plan (kernels/common/chunk_plan.h, 48 MiB) over the same model with an
// unlimited budget, which splits each operand once, as the driver did before it had chunks.
// Both sides share every constant, so the ratio is the model's count of the extra passes over
// the operands, nothing measured; the same on every machine.
//
//   amxblas_chunk_model [--sizes "1024 2048 4096"] [--threads T] [--backend amx|avx512|reference]
//
// Prints a table and a PASS/MISS line per row; exits 0 whatever the verdicts (2 on bad usage).
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/isa/backend.h"
#include "policy/cost_model.h"

namespace {

using amxblas::CostInput;
using amxblas::predict_cost;
namespace k = amxblas::kernels;

struct Route {
    const char* name;
    k::Precision precision;
    bool complex;
    int products, slices;
};

// The routes the issue names (SGEMM, DGEMM fixed 21 and auto, ZGEMM auto), and the fixed
// counts whose products weigh least beside their splits (6) or are ZGEMM's default (21).
const Route kRoutes[] = {
    {"SGEMM", k::Precision::fp32, false, 6, 3},
    {"DGEMM-6", k::Precision::fp64, false, 6, 3},
    {"DGEMM-21", k::Precision::fp64, false, 21, 6},
    {"DGEMM auto", k::Precision::fp64, false, k::kFp64Auto, 6},
    {"ZGEMM-21", k::Precision::fp64, true, 21, 6},
    {"ZGEMM auto", k::Precision::fp64, true, k::kFp64Auto, 6},
};

constexpr double kTarget = 1.05;
constexpr std::size_t kWhole = std::size_t(1) << 50;  // no call of these sizes needs more

int usage() {
    std::fprintf(stderr, "usage: amxblas_chunk_model [--sizes \"N ...\"] [--threads T] [--backend amx|avx512|reference]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<long> sizes{1024, 2048, 4096};
    int threads = 2;
    k::Backend backend = k::Backend::amx;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        if (a == "--sizes") {
            sizes.clear();
            std::istringstream in(argv[++i]);
            for (long n; in >> n;)
                if (n > 0) sizes.push_back(n);
            if (sizes.empty()) return usage();
        } else if (a == "--threads") {
            threads = std::atoi(argv[++i]);
            if (threads < 1) return usage();
        } else if (a == "--backend") {
            if (!k::parse_backend(argv[++i], &backend)) return usage();
        } else {
            return usage();
        }
    }
    std::printf("\n== The chunked driver against whole-operand splits, cost model, backend %s, %d threads ==\n",
                k::backend_name(backend), threads);
    std::printf("routed time with the driver's 48 MiB chunks over the same model splitting each operand once "
                "(policy/cost_model.cc; assumptions and sources there); target <= %.2fx\n",
                kTarget);
    std::printf("%-11s %6s %11s %11s %8s %13s %13s\n", "call", "N", "whole_ms", "chunked_ms", "ratio", "whole_sp_GB",
                "chunked_sp_GB");
    int pass = 0, miss = 0;
    std::string verdicts;
    for (const Route& r : kRoutes)
        for (long n : sizes) {
            CostInput in;
            in.precision = r.precision;
            in.complex = r.complex;
            in.m = in.n = in.k = n;
            in.products = r.products;
            in.slices = r.slices;
            in.backend = backend;
            in.threads = threads;
            const amxblas::CostPrediction chunked = predict_cost(in);
            in.chunk_budget_bytes = kWhole;
            const amxblas::CostPrediction whole = predict_cost(in);
            const double ratio = chunked.routed_s / whole.routed_s;
            std::printf("%-11s %6ld %11.2f %11.2f %8.3f %13.3f %13.3f\n", r.name, n, 1e3 * whole.routed_s,
                        1e3 * chunked.routed_s, ratio, 1e-9 * whole.split_pack_bytes, 1e-9 * chunked.split_pack_bytes);
            const bool ok = ratio <= kTarget;
            (ok ? pass : miss)++;
            char line[160];
            std::snprintf(line, sizeof line, "%s  model chunked / whole %s N=%ld: %.3fx, target <= %.2f\n",
                          ok ? "PASS" : "MISS", r.name, n, ratio, kTarget);
            verdicts += line;
        }
    std::printf("%s", verdicts.c_str());
    std::printf("chunk model: %d of %d within %.2fx (%d MISS)\n", pass, pass + miss, kTarget, miss);
    return 0;
}

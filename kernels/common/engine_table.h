// The FP64 engines of kernels/common/engines.def as constexpr data, and the lookups every layer
// uses: names, the counts each runs, the INT8 engine's limits. A leaf beside variants.h.
#pragma once

#include <cstring>

#include "kernels/common/gemm_types.h"
#include "kernels/common/variants.h"

namespace amxblas::kernels {

// How an engine's fixed counts are routed (engines.def's counts column).
enum class Fp64Counts { variants, range };

struct Fp64EngineRow {
    Fp64Engine id;
    const char* name;       // "int8": AMXBLAS_FP64_ENGINE's value and the log's engine=
    const char* route;      // "fp64-int8": the route of its fixed counts (counts = range)
    int min_count, max_count;
    Fp64Counts counts;
    const char* unit;       // "moduli"
};

inline constexpr Fp64EngineRow kFp64Engines[] = {
#define AMXBLAS_FP64_ENGINE(id, min_count, max_count, counts, unit, cost) \
    {Fp64Engine::id, #id, "fp64-" #id, min_count, max_count, Fp64Counts::counts, unit},
#include "kernels/common/engines.def"
#undef AMXBLAS_FP64_ENGINE
};
static_assert(sizeof kFp64Engines / sizeof kFp64Engines[0] == kFp64EngineCount, "one row per Fp64Engine");

constexpr const Fp64EngineRow& fp64_engine_row(Fp64Engine e) {
    return kFp64Engines[e == Fp64Engine::automatic ? kFp64EngineCount - 1 : static_cast<int>(e)];
}
// "int8", "bf16", ...; "auto" for the automatic engine.
constexpr const char* fp64_engine_name(Fp64Engine e) {
    return e == Fp64Engine::automatic ? "auto" : fp64_engine_row(e).name;
}
// AMXBLAS_FP64_ENGINE's value `name` (a row's name, or auto); false when there is none.
inline bool parse_fp64_engine(const char* name, Fp64Engine* out) {
    for (int e = 0; e <= kFp64EngineCount; ++e)
        if (std::strcmp(name, fp64_engine_name(static_cast<Fp64Engine>(e))) == 0) {
            *out = static_cast<Fp64Engine>(e);
            return true;
        }
    return false;
}

// The engine whose fixed counts are the FP64 variants of variants.def (bf16): the variants'
// routes run on it.
constexpr Fp64Engine fp64_variants_engine() {
    for (const Fp64EngineRow& r : kFp64Engines)
        if (r.counts == Fp64Counts::variants) return r.id;
    return kFp64BaseEngine;
}
constexpr int fp64_variant_engines() {
    int n = 0;
    for (const Fp64EngineRow& r : kFp64Engines) n += r.counts == Fp64Counts::variants;
    return n;
}
static_assert(fp64_variant_engines() <= 1, "engines.def: at most one row's counts are the variants");
// The engines with a route of their own (counts = range), before engine e.
constexpr int fp64_range_engines_before(int e) {
    int n = 0;
    for (int i = 0; i < e; ++i) n += kFp64Engines[i].counts == Fp64Counts::range;
    return n;
}
constexpr int kFp64RangeEngines = fp64_range_engines_before(kFp64EngineCount);

// True when engine e runs `count` as a fixed count (AMXBLAS_FP64_PRODUCTS); the automatic
// engine's fixed counts are the base engine's.
constexpr bool fp64_count_accepted(Fp64Engine e, int count) {
    const Fp64EngineRow& r = fp64_engine_row(e);
    if (count < r.min_count || count > r.max_count) return false;
    return r.counts == Fp64Counts::range || fp64_variant(count) != nullptr;
}
// The largest fixed count of any engine.
constexpr int fp64_max_count() {
    int n = 0;
    for (const Fp64EngineRow& r : kFp64Engines) n = r.max_count > n ? r.max_count : n;
    return n;
}
constexpr int kFp64MaxCount = fp64_max_count();

// The INT8 engine's moduli (kernels/int8/crt_basis.h builds a basis for each count).
constexpr int kInt8MinModuli = fp64_engine_row(Fp64Engine::int8).min_count;
constexpr int kInt8MaxModuli = fp64_engine_row(Fp64Engine::int8).max_count;

}  // namespace amxblas::kernels

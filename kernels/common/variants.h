// The emulation variants of kernels/common/variants.def as a constexpr array, and the lookups every
// layer uses. A leaf: it includes only the leaf types header.
#pragma once

#include <cstddef>

#include "kernels/common/gemm_types.h"

namespace amxblas::kernels {

enum class Precision { fp32, fp64 };

struct Variant {
    const char* id;     // "fp64_10"
    const char* route;  // "fp64-10", the log's route= name
    Precision precision;
    int slices;
    int products;
    int depth;
};

inline constexpr Variant kVariants[] = {
#define AMXBLAS_VARIANT(id, route, precision, slices, products, depth) \
    {#id, route, Precision::precision, slices, products, depth},
#include "kernels/common/variants.def"
#undef AMXBLAS_VARIANT
};
inline constexpr int kVariantCount = static_cast<int>(sizeof kVariants / sizeof kVariants[0]);

// The FP64 variants' product counts in table order: the AMXBLAS_FP64_PRODUCTS values besides 0,
// and what per-variant loops (tests, benchmarks) iterate over.
#define AMXBLAS_FP64_ONLY_fp64(products) products,
#define AMXBLAS_FP64_ONLY_fp32(products)
inline constexpr int kFp64Products[] = {
#define AMXBLAS_VARIANT(id, route, precision, slices, products, depth) AMXBLAS_FP64_ONLY_##precision(products)
#include "kernels/common/variants.def"
#undef AMXBLAS_VARIANT
};
#undef AMXBLAS_FP64_ONLY_fp64
#undef AMXBLAS_FP64_ONLY_fp32

// Row i of the table, or nullptr outside it (routes and benchmark cases number the rows from
// an offset of their own).
constexpr const Variant* variant_at(int i) { return i >= 0 && i < kVariantCount ? &kVariants[i] : nullptr; }

// The FP64 variant retaining `products` component products, or nullptr.
constexpr const Variant* fp64_variant(int products) {
    for (const Variant& v : kVariants)
        if (v.precision == Precision::fp64 && v.products == products) return &v;
    return nullptr;
}

// The largest FP64 product count and slice count of the table (sizes of the schedules).
constexpr int max_fp64(int Variant::*field) {
    int m = 0;
    for (const Variant& v : kVariants)
        if (v.precision == Precision::fp64 && v.*field > m) m = v.*field;
    return m;
}
inline constexpr int kMaxFp64Products = max_fp64(&Variant::products);

constexpr bool variants_consistent() {
    for (const Variant& v : kVariants) {
        if (v.precision == Precision::fp64 &&
            (v.products != fp64_products_of_depth(v.depth) || v.depth > v.slices || v.slices > kFp64Slices))
            return false;
        if (v.precision == Precision::fp32 && v.slices != kFp32Slices) return false;
    }
    return true;
}
static_assert(variants_consistent(), "kernels/common/variants.def: an FP64 row needs products = d(d+1)/2 "
                                     "and d <= slices <= kFp64Slices; FP32 rows kFp32Slices slices");

}  // namespace amxblas::kernels

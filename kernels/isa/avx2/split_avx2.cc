// The FP64 split built with the AVX2 flags (sources.cmake): the same source as the portable
// build (kernels/isa/fp64_split_runs.inc), four doubles a vector instead of two. Used only
// where isa_runs(Isa::avx2); isa_avx2.cc puts it in the row's split table.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/isa/split.h"

namespace amxblas::kernels {
namespace {

#include "kernels/isa/fp64_split_runs.inc"

}  // namespace

SliceStatus fp64_split_avx2(const double* x, std::size_t n, const Fp64Scales& sc, bf16_t* const s[kFp64Slices],
                            double* resid_max) {
    return fp64_split_in_runs(x, n, sc, s, resid_max);
}

}  // namespace amxblas::kernels

// The calibration's operands: values from a fixed sequence (a GEMM's speed does not depend on
// them, but subnormal or zero operands could), grown as larger shapes need them.
#pragma once

#include <cstddef>
#include <vector>

namespace amxblas::calibrate {

enum class Range { symmetric, positive };  // [-1, 1) or [0, 1)

// Extends *v to `values` entries of the sequence that starts at `seed`; entries already there
// are kept.
template <typename Real>
void grow_operand(std::vector<Real>* v, std::size_t values, unsigned long long seed, Range range) {
    if (v->size() >= values) return;
    std::size_t i = v->size();
    v->resize(values);
    unsigned long long x = seed + i;
    for (; i < values; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        (*v)[i] = range == Range::symmetric ? Real(double(x >> 11) / double(1ULL << 52) - 1.0)
                                            : Real(double(x >> 11) / double(1ULL << 53));
    }
}

}  // namespace amxblas::calibrate

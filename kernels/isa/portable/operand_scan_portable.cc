// The portable operand scan (kernels/isa/operand_scan_runs.h): the definition the other
// instruction sets' scans must match, and the accumulator they all merge into.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/isa/operand_scan_runs.h"

namespace amxblas::kernels {
namespace {

constexpr std::uint64_t kFp64FracMask = (std::uint64_t{1} << 52) - 1;
constexpr std::uint64_t kFp64AbsMask = ~(std::uint64_t{1} << 63);
constexpr std::uint64_t kFp64InfBits = 0x7ff0000000000000u;
constexpr std::uint32_t kFp32InfBits = 0x7f800000u;

std::uint64_t bits_of(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

double double_of(std::uint64_t u) {
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

float float_of(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

}  // namespace

namespace detail {

void merge_fp32(bool nonfinite, std::uint32_t max_bits, std::uint32_t min_bits, ScanAcc* acc) {
    acc->nonfinite = acc->nonfinite || nonfinite;
    acc->max_abs = std::max(acc->max_abs, static_cast<double>(float_of(max_bits)));
    acc->min_abs = std::min(acc->min_abs, static_cast<double>(float_of(min_bits)));
}

void merge_fp64(bool nonfinite, std::uint64_t max_bits, std::uint64_t min_bits, ScanAcc* acc) {
    acc->nonfinite = acc->nonfinite || nonfinite;
    acc->max_abs = std::max(acc->max_abs, double_of(max_bits));
    acc->min_abs = std::min(acc->min_abs, double_of(min_bits));
}

ScanAcc::ScanAcc()
    : min_abs(std::numeric_limits<double>::infinity()),
      min_lowbit(std::numeric_limits<double>::infinity()) {}

OperandSummary ScanAcc::finish() const {
    OperandSummary s;
    s.nonfinite = nonfinite;
    s.max_abs = max_abs;
    s.min_abs = std::isinf(min_abs) ? 0 : min_abs;
    s.min_lowbit = std::isinf(min_lowbit) ? 0 : min_lowbit;
    return s;
}

// Both scans compare |x| as integers: for nonnegative IEEE values the bit patterns order like
// the values, and integer compares are unaffected by a caller's DAZ/FTZ mode.
void scan_run_fp32_portable(const float* x, std::size_t n, ScanAcc* acc) {
    bool nonfinite = false;
    std::uint32_t mx = 0, mn = kFp32InfBits;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t u;
        std::memcpy(&u, x + i, sizeof u);
        u &= 0x7fffffffu;
        if (u >= kFp32InfBits) {
            nonfinite = true;
            continue;
        }
        if (u > mx) mx = u;
        if (u != 0 && u < mn) mn = u;
    }
    merge_fp32(nonfinite, mx, mn, acc);
}

void scan_run_fp64_portable(const double* x, std::size_t n, ScanAcc* acc) {
    bool nonfinite = false;
    std::uint64_t mx = 0, mn = kFp64InfBits;
    double low = acc->min_lowbit;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t u = bits_of(x[i]) & kFp64AbsMask;
        if (u >= kFp64InfBits) {
            nonfinite = true;
            continue;
        }
        if (u == 0) continue;
        if (u > mx) mx = u;
        if (u < mn) mn = u;
        // Clearing the lowest set bit of the significand leaves a value in the same binade, so
        // the difference is exactly that bit's weight. A power of two is its own lowest bit.
        const double a = double_of(u);
        const double lb = (u & kFp64FracMask) == 0 ? a : a - double_of(u & (u - 1));
        if (lb < low) low = lb;
    }
    merge_fp64(nonfinite, mx, mn, acc);
    acc->min_lowbit = low;
}

}  // namespace detail

}  // namespace amxblas::kernels

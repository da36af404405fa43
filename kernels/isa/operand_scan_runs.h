// The operand scan's instruction-set contract (kernels/scan/operand_scan.h uses it): one run
// function per element type, which merges a contiguous run of n values into a ScanAcc. Every
// implementation returns the same summary for every input (only comparisons and exact
// operations), so the order of the reduction does not matter.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/operand_summary.h"

namespace amxblas::kernels {

namespace detail {
// The running state of a scan: the minima start at +Inf ("none yet"), and finish() turns it
// into an OperandSummary. Each run function merges one contiguous run of n values into it.
struct ScanAcc {
    bool nonfinite = false;
    double max_abs = 0;
    double min_abs;
    double min_lowbit;
    ScanAcc();
    OperandSummary finish() const;
};
// Merges a run's results, given as the bit patterns of the largest and smallest nonzero |x|
// (the +Inf pattern when the run had no nonzero finite entry).
void merge_fp32(bool nonfinite, std::uint32_t max_bits, std::uint32_t min_bits, ScanAcc* acc);
void merge_fp64(bool nonfinite, std::uint64_t max_bits, std::uint64_t min_bits, ScanAcc* acc);
void scan_run_fp32_portable(const float* x, std::size_t n, ScanAcc* acc);
void scan_run_fp64_portable(const double* x, std::size_t n, ScanAcc* acc);
void scan_run_fp32_avx512(const float* x, std::size_t n, ScanAcc* acc);
void scan_run_fp64_avx512(const double* x, std::size_t n, ScanAcc* acc);
}  // namespace detail

// One instruction set's scan: what kernels/isa/isa.h lists per row.
struct ScanRuns {
    void (*fp32)(const float* x, std::size_t n, detail::ScanAcc* acc);
    void (*fp64)(const double* x, std::size_t n, detail::ScanAcc* acc);
};

}  // namespace amxblas::kernels

// The portable scan, the per-process choice of implementation, and the strided walk.
#include "kernels/scan/operand_scan.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {

namespace {


// Operands of at least this many entries are scanned by the call's threads (the kernels'
// pool): below it, waking a worker costs more than the pass saves (amxblas_scan_bench: at
// N = 512, 2^18 entries per operand, 2 threads were slower than 1 here).
constexpr std::int64_t kParallelScanEntries = std::int64_t{1} << 19;
constexpr std::int64_t kChunkEntries = std::int64_t{1} << 16;  // one piece of work
// A pass over memory stops speeding up long before this many threads share it; the limit
// keeps the per-thread accumulators on the stack.
constexpr int kMaxScanThreads = 64;

// Everything in ScanAcc is a maximum, a minimum or an "or", so merging per-thread
// accumulators in any order gives the same summary as one sequential pass: the scan's result
// never depends on the thread count.
void merge_acc(const detail::ScanAcc& from, detail::ScanAcc* into) {
    into->nonfinite = into->nonfinite || from.nonfinite;
    into->max_abs = std::max(into->max_abs, from.max_abs);
    into->min_abs = std::min(into->min_abs, from.min_abs);
    into->min_lowbit = std::min(into->min_lowbit, from.min_lowbit);
}

// Scans columns [j0, j1) (or, for a contiguous matrix, entries [j0, j1) of the flat array).
template <typename T, typename Run>
void scan_range(const T* x, std::int64_t rows, std::int64_t ld, bool flat, std::int64_t j0, std::int64_t j1,
                Run run, detail::ScanAcc* acc) {
    if (flat) {
        run(x + j0, static_cast<std::size_t>(j1 - j0), acc);
        return;
    }
    for (std::int64_t j = j0; j < j1; ++j)
        run(x + static_cast<std::size_t>(j) * static_cast<std::size_t>(ld), static_cast<std::size_t>(rows), acc);
}

template <typename T, typename Run>
OperandSummary scan_matrix(const T* x, std::int64_t rows, std::int64_t cols, std::int64_t ld, Run run,
                           int threads) {
    detail::ScanAcc acc;
    if (rows <= 0 || cols <= 0) return acc.finish();
    const bool flat = ld == rows;  // one contiguous run of rows * cols entries
    const std::int64_t extent = flat ? rows * cols : cols;
    const std::int64_t per_chunk = flat ? kChunkEntries : std::max<std::int64_t>(1, kChunkEntries / rows);
    const std::int64_t chunks = (extent + per_chunk - 1) / per_chunk;
    // (More chunks than an int counts would need an operand of 2^47 entries: scanned serially.)
    if (threads <= 1 || rows * cols < kParallelScanEntries || chunks < 2 || chunks > INT32_MAX) {
        scan_range(x, rows, ld, flat, 0, extent, run, &acc);
        return acc.finish();
    }
    threads = static_cast<int>(std::min<std::int64_t>(threads, kMaxScanThreads));
    detail::ScanAcc part[kMaxScanThreads];
    kernels::parallel_for(threads, static_cast<int>(chunks),
                          [&](int c, int participant) {
                              const std::int64_t j0 = std::int64_t{c} * per_chunk;
                              scan_range(x, rows, ld, flat, j0, std::min(extent, j0 + per_chunk), run,
                                         &part[participant]);
                          });
    for (int t = 0; t < threads; ++t) merge_acc(part[t], &acc);
    return acc.finish();
}

}  // namespace


namespace {

// The scan loop of `impl` (this CPU's, isa_here(), where it cannot run `impl`), per element type.
const ScanRuns& scan_runs(ScanImpl impl) { return *isa_kernels(isa_runs(impl) ? impl : isa_here()).scan; }
auto scan_run(const float*, ScanImpl impl) { return scan_runs(impl).fp32; }
auto scan_run(const double*, ScanImpl impl) { return scan_runs(impl).fp64; }

}  // namespace

OperandSummary scan_fp32_with(ScanImpl impl, const float* x, int rows, int cols, std::int64_t ld, int threads) {
    return scan_matrix(x, rows, cols, ld, scan_run(x, impl), threads);
}

OperandSummary scan_fp64_with(ScanImpl impl, const double* x, int rows, int cols, std::int64_t ld, int threads) {
    return scan_matrix(x, rows, cols, ld, scan_run(x, impl), threads);
}

OperandSummary scan_fp32(const float* x, int rows, int cols, std::int64_t ld, int threads) {
    return scan_fp32_with(scan_impl(), x, rows, cols, ld, threads);
}

OperandSummary scan_fp64(const double* x, int rows, int cols, std::int64_t ld, int threads) {
    return scan_fp64_with(scan_impl(), x, rows, cols, ld, threads);
}

OperandSummary scan_fp32_operand(char trans, int rows, int cols, const float* x, std::int64_t ld, int threads) {
    return is_no_trans(trans) ? scan_fp32(x, rows, cols, ld, threads) : scan_fp32(x, cols, rows, ld, threads);
}

OperandSummary scan_fp64_operand(char trans, int rows, int cols, const double* x, std::int64_t ld, int threads) {
    return is_no_trans(trans) ? scan_fp64(x, rows, cols, ld, threads) : scan_fp64(x, cols, rows, ld, threads);
}

namespace {

// A stored complex column of r entries is 2r contiguous parts.
template <typename T>
OperandSummary scan_complex_operand(char trans, int rows, int cols, const T* x, std::int64_t ld, int threads) {
    const std::int64_t r = is_no_trans(trans) ? rows : cols, c = is_no_trans(trans) ? cols : rows;
    return scan_matrix(x, 2 * r, c, 2 * std::int64_t{ld}, scan_run(x, scan_impl()), threads);
}

}  // namespace

OperandSummary scan_fp32_complex_operand(char trans, int rows, int cols, const float* x, std::int64_t ld,
                                         int threads) {
    return scan_complex_operand(trans, rows, cols, x, ld, threads);
}

OperandSummary scan_fp64_complex_operand(char trans, int rows, int cols, const double* x, std::int64_t ld,
                                         int threads) {
    return scan_complex_operand(trans, rows, cols, x, ld, threads);
}

namespace {

OperandSummary scan_operand(char trans, int rows, int cols, const float* x, std::int64_t ld, int threads) {
    return scan_fp32_operand(trans, rows, cols, x, ld, threads);
}
OperandSummary scan_operand(char trans, int rows, int cols, const double* x, std::int64_t ld, int threads) {
    return scan_fp64_operand(trans, rows, cols, x, ld, threads);
}
OperandSummary scan_operand(char trans, int rows, int cols, const std::complex<float>* x, std::int64_t ld,
                            int threads) {
    return scan_fp32_complex_operand(trans, rows, cols, reinterpret_cast<const float*>(x), ld, threads);
}
OperandSummary scan_operand(char trans, int rows, int cols, const std::complex<double>* x, std::int64_t ld,
                            int threads) {
    return scan_fp64_complex_operand(trans, rows, cols, reinterpret_cast<const double*>(x), ld, threads);
}

template <typename T>
OperandScans scan_operands(const GemmArgs<T>& g, int threads) {
    OperandScans s;
    s.a = scan_operand(g.transa, g.m, g.k, g.a, g.lda, threads);
    if (s.a.nonfinite) return s;  // the call is decided: no need to read B
    s.b = scan_operand(g.transb, g.k, g.n, g.b, g.ldb, threads);
    return s;
}

}  // namespace

OperandScans scan_gemm_operands(const GemmArgs<float>& g, int threads) { return scan_operands(g, threads); }
OperandScans scan_gemm_operands(const GemmArgs<double>& g, int threads) { return scan_operands(g, threads); }
OperandScans scan_gemm_operands(const GemmArgs<std::complex<float>>& g, int threads) {
    return scan_operands(g, threads);
}
OperandScans scan_gemm_operands(const GemmArgs<std::complex<double>>& g, int threads) {
    return scan_operands(g, threads);
}

}  // namespace amxblas::kernels

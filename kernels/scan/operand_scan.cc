// The portable scan, the per-process choice of implementation, and the strided walk.
#include "kernels/scan/operand_scan.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/runtime/cpu_features.h"
#include "kernels/runtime/thread_pool.h"

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

bool is_no_trans(char t) { return t == 'N' || t == 'n'; }

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

bool scan_avx512_available() { return cpu_has_avx512_split(); }

ScanImpl scan_impl() { return scan_avx512_available() ? ScanImpl::avx512 : ScanImpl::portable; }

const char* scan_impl_name(ScanImpl impl) {
    return impl == ScanImpl::avx512 ? "avx512" : "portable";
}

namespace {

// The scan loop of `impl` (portable where AVX-512 cannot run), per element type.
auto scan_run(const float*, ScanImpl impl) {
    return impl == ScanImpl::avx512 && scan_avx512_available() ? detail::scan_run_fp32_avx512
                                                               : detail::scan_run_fp32_portable;
}
auto scan_run(const double*, ScanImpl impl) {
    return impl == ScanImpl::avx512 && scan_avx512_available() ? detail::scan_run_fp64_avx512
                                                               : detail::scan_run_fp64_portable;
}

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

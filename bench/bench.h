// Shared pieces of the benchmark driver (amxblas_bench, run by scripts/bench.sh).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/common/variants.h"
#include "tests/common/metrics.h"

namespace amxblas::bench {

// Wall-clock seconds (CLOCK_MONOTONIC).
double now_s();
double median(std::vector<double> v);
// One target's line: "PASS  what" or "MISS  what".
void verdict(bool pass, const char* what);

// One GEMM problem, column-major, no transposition.
struct Shape {
    int m, n, k;
    bool square() const { return m == n && n == k; }
};

// The routes measured: the two OpenBLAS baselines and every variant of kernels/common/variants.def.
enum class Route {
    openblas_sgemm,
    openblas_dgemm,
#define AMXBLAS_VARIANT(id, route, precision, slices, products, depth) id,
#include "kernels/common/variants.def"
#undef AMXBLAS_VARIANT
};
constexpr Route kAllRoutes[] = {
    Route::openblas_sgemm,
    Route::openblas_dgemm,
#define AMXBLAS_VARIANT(id, route, precision, slices, products, depth) Route::id,
#include "kernels/common/variants.def"
#undef AMXBLAS_VARIANT
};
const char* route_name(Route r);
bool route_is_fp64(Route r);
bool route_is_baseline(Route r);
int route_products(Route r);  // the variant's component products; 0 for the baselines
int route_slices(Route r);    // the variant's slices per operand; 0 for the baselines

enum class InputClass { uniform, loguniform, cancellation };
constexpr InputClass kAllInputs[] = {InputClass::uniform, InputClass::loguniform,
                                     InputClass::cancellation};
const char* input_name(InputClass c);
// What each class is, for the printed legend.
const char* input_description(InputClass c);

// A and B (m x k and k x n, ld = rows) of a class, in double; the float run uses the same
// values rounded to float (the exact reference is then computed from the float values).
void make_inputs(InputClass c, const Shape& s, std::uint64_t seed, std::vector<double>* a,
                 std::vector<double>* b);

// Accuracy of C (m x n, ld = m) against a reference (eF, escaled: tests/common/metrics.h).
using test::Errors;
// Against a full reference matrix; absab is |A||B| in double.
template <typename T>
Errors errors_full(const std::vector<T>& c, const std::vector<T>& ref, const std::vector<double>& absab);

// The exact reference on a sample of entries: each dot product summed in __float128 (every
// product of two doubles is exact there; the sum has 113 significant bits).
struct ExactSample {
    std::vector<int> i, j;
    std::vector<double> value;  // the exact C(i, j), rounded to double at the end
    std::vector<double> absab;  // (|A||B|)(i, j), summed in __float128
};
template <typename T>
ExactSample exact_sample(const Shape& s, const std::vector<T>& a, const std::vector<T>& b, int count,
                         std::uint64_t seed);
template <typename T>
Errors errors_sampled(const std::vector<T>& c, int ldc, const ExactSample& ex);
// The largest errors of C (ld = ldc) on the sample: max |C - exact| and max |C - exact| /
// (|A||B|)_ij.
struct MaxErr {
    double abs = 0, rel = 0;
};
MaxErr max_errors(const std::vector<double>& c, int ldc, const ExactSample& ex);

// Section: the VDPBF16PS peak and the avx512 micro-kernel's in-cache rate (bench_peak_avx512bf16.cc).
struct PeakResult {
    bool ran = false;
    double peak_1t = 0, peak_all = 0;          // VDPBF16PS instructions per second
    double chain_1t = 0, chain_all = 0;        // fp32_chain, in VDPBF16PS-equivalents per second
    double product_1t = 0, product_all = 0;    // product, same unit
};
// Only where the avx512 backend is built and this CPU runs it (the caller checks).
PeakResult measure_peak_and_microkernel(int threads, double seconds_per_point);

// The same section, where the CPU has AVX512_VNNI: the VPDPBUSD peak, beside the VDPBF16PS one,
// and the avx512 INT8 micro-kernel's in-cache rate (bench_peak_avx512vnni.cc).
struct VnniPeakResult {
    bool ran = false;
    double peak_1t = 0;        // VPDPBUSD instructions per second, one thread
    double product_s8_1t = 0;  // product_s8, in VPDPBUSD-equivalents per second
};
// Only where the avx512 backend runs and cpu_has_avx512_vnni() (the caller checks).
VnniPeakResult measure_vnni_peak(double seconds_per_point);

// Section: forwarding overhead through libamxblas.so (bench_forwarding.cc).
struct ForwardRow {
    int n;
    double direct_ns, interposed_ns, added_ns, ratio;
};
// Empty result and a message in *why when the libraries cannot be opened.
std::vector<ForwardRow> measure_forwarding(const std::string& interposer, const std::vector<int>& sizes,
                                           int pairs, std::string* why);

// Section: the first call of a fresh process (bench_first_call.cc). The child appends one row
// to csv_path; the summary reads them all.
int run_first_call(int n, const std::string& route, bool baseline, const std::string& csv_path);
int summarize_first_calls(const std::string& csv_path);

// Section: tile-instruction counts under the trap harness and the modelled AMX time (bench_amx.cc).
int run_amx_counts(const Shape& s, int threads, const std::string& csv_path);

// The AMX cost model (bench_amx.cc documents the sources). Cycles per instruction per core
// (reciprocal throughput) and the clock.
constexpr double kTdpCycles = 16, kLoadCycles = 8, kStoreCycles = 8, kAmxClockHz = 2.0e9;
// The tile instructions one call issues, from the driver's blocking (docs/amx-harness.md):
// per 32x32 micro-tile and 32-deep K step, FP32: 14 TILELOADD + 24 TDPBF16PS, FP64-Np: 4 Np of
// each; per micro-tile and BK = 256 panel, 4 (FP32) or 4 Np (FP64) TILEZERO and TILESTORED.
// The harness run checks this against its exact counts.
struct TileCounts {
    double tdpbf16ps = 0, tileloadd = 0, tilestored = 0, tilezero = 0;
};
TileCounts tile_counts(Route r, const Shape& s);
// Tile work of those counts on `cores` cores, loads and stores overlapped with the products.
double tile_seconds(const TileCounts& c, int cores);

// Section: the whole-call AMX model (bench_model.cc): measured split + pack and reconstruction
// rates (per core, this machine) plus the tile model, against native SGEMM/DGEMM.
struct MeasuredPhases {
    double scan_bytes_per_core_s_fp32 = 0, scan_bytes_per_core_s_fp64 = 0;  // the domain scan
    double sp_bytes_per_core_s_fp32 = 0;                  // split + pack, FP32
    std::map<Route, double> sp_bytes_per_core_s_fp64;     // split + pack, per FP64 route
    double recon_values_per_core_s_fp32 = 0;  // FP32 panel adds (values added per second)
    double recon_values_per_core_s_fp64 = 0;  // FP64 widen-adds (tile values widened per second)
    int from_n = 0;                           // the order they were measured at
};
// Prints the model table and its PASS/MISS lines; writes model.csv.
void print_amx_model(const MeasuredPhases& m, int cores, const std::string& csv_path);
// Bytes split + pack moves on route r (bench_main.cc's definition: the slices r writes).
double split_pack_bytes(const Shape& s, Route r);

}  // namespace amxblas::bench

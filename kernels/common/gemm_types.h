// The plain types every layer shares: the GEMM call, the backend, the run options, the phase
// times. A leaf header: it includes nothing of the project, so policy/ and shim/ can name
// these types without pulling in the kernels' entry points.
#pragma once

#include <cstddef>
#include <cstdint>

namespace amxblas::kernels {

struct MicroKernels;  // kernels/isa/microkernel.h

constexpr int kFp32Slices = 3;  // BF16 slices per FP32 value (paper Eq. 8)
// Ozaki BF16 slices per FP64 value (paper Eqs. 13-14): up to eight (36 products, i + j < 8);
// the paper's experiment uses six.
constexpr int kFp64Slices = 8;
// RunOptions::fp64_products for AMXBLAS_FP64_PRODUCTS=auto: the fewest products whose
// per-entry error certificate holds (kernels/certificate/fp64_certificate.h, docs/fp64-certificate.md).
constexpr int kFp64Auto = -1;
// The slices BF16's auto splits before its certificate decides (RunOptions::fp64_auto_depth):
// the six of the 21 products it picks on ordinary data (docs/accuracy.md). Where that depth
// leaves entries failing it splits all eight and decides again (kernels/bf16/bf16_engine.cc).
constexpr int kFp64AutoFirstDepth = 6;

// The FP64 engines of kernels/common/engines.def (AMXBLAS_FP64_ENGINE), in its order: int8,
// Ozaki scheme II on INT8 products (kernels/int8/: 6 ... 24 moduli, one product each); bf16,
// the paper's BF16 slices (kernels/bf16/: 6 ... 36 products). Then automatic, per call: with
// fp64_products = kFp64Auto the engines in the table's order, the first whose certificate
// passes; a fixed count is the table's last row's (kernels/common/engine_table.h).
enum class Fp64Engine : int {
#define AMXBLAS_FP64_ENGINE(id, min_count, max_count, counts, unit, cost) id,
#include "kernels/common/engines.def"
#undef AMXBLAS_FP64_ENGINE
    automatic
};
constexpr int kFp64EngineCount = static_cast<int>(Fp64Engine::automatic);
// The base engine (engines.def): the last row.
constexpr Fp64Engine kFp64BaseEngine = static_cast<Fp64Engine>(kFp64EngineCount - 1);

// The micro-kernel backends of kernels/common/backends.def, in its order: amx (AMX-BF16, TDPBF16PS),
// avx512 (AVX-512 BF16, VDPBF16PS), reference (portable scalar, the SDM's TDPBF16PS).
enum class Backend : int {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) id,
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
};
constexpr int kBackendCount = 0
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) +1
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
    ;
inline constexpr Backend kAllBackends[] = {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) Backend::id,
#include "kernels/common/backends.def"
#undef AMXBLAS_BACKEND
};

// Time spent in each phase of one call, for the benchmark's breakdown (Figure 10 of the paper).
struct PhaseTimes {
    double split_pack_s = 0;  // split into BF16 slices and packing of the component buffers
    double certificate_s = 0; // FP64 auto: the lower-bound product and the certificate
    double certificate_test_s = 0;  // the per-entry test alone (part of certificate_s)
    double compute_s = 0;     // component products and reconstruction into C
    // The part of compute_s spent adding panel results into the block accumulator (FP32), or
    // widening the product tiles and adding them into it (FP64): per-thread time, averaged.
    double reconstruct_s = 0;
    // FP64 on the BF16 engine: the passes over both operands that found the split's scales
    // before the products (kernels/bf16/fp64_facts.h); 0 where the guessed scales held.
    int facts_passes = 0;
};

// What an FP64 auto call decided (RunOptions::fp64_report).
struct Fp64AutoReport {
    Fp64Engine engine = kFp64BaseEngine;  // the engine that ran (a row of engines.def)
    int products = 0;     // bf16: 6 ... 36 products; int8: 6 ... 24 moduli
    double margin = 0;    // min over certified entries of (allowed bound) / (certified bound)
    long repaired = 0;    // entries of C recomputed in FP64 instead (ZGEMM: complex entries)
};

struct RunOptions {
    Backend backend = Backend::reference;
    int fp64_products = 21;              // 6, 10, 15, 21, 28, 36 or kFp64Auto (DGEMM, ZGEMM);
                                         // int8 engine: 6 ... 24 moduli or kFp64Auto
    Fp64Engine fp64_engine = Fp64Engine::bf16;
    // Auto, under the automatic engine: an engine tried before this one refused the call for
    // accuracy (kernels/driver/routed_gemm.cc). Data that hard make BF16 split all eight slices
    // at once (fp64_auto_depth).
    bool fp64_refused_before = false;
    double fp64_tol = 1;                 // auto: accepted factor over DGEMM's error bound
    Fp64AutoReport* fp64_report = nullptr;  // auto: filled when the call routed
    int threads = 1;                     // threads for split, pack and compute (kernels/runtime/thread_pool.h)
    std::size_t workspace_cap_bytes = 0; // 0: no cap beyond what malloc grants
    // The caller found the AMX trap-and-emulate harness (amxemu/) loaded in this process,
    // so the amx backend runs without AMX hardware. The kernels do not look for it themselves:
    // the caller asks kernels/runtime/cpu_features.h, amx_emulator_present().
    bool amx_emulator = false;
    PhaseTimes* times = nullptr;         // optional
    // A micro-kernel set to use instead of the backend's (which must still be usable): the
    // expert hook, as BLIS's expert interface takes a context, through which
    // tests/kernels/bf16/kernels_geometry_test.cc runs a set of another geometry that is no
    // backend. Nothing above the kernels sets it.
    const MicroKernels* microkernels = nullptr;
    // Smaller chunks than the driver's own (kernels/bf16/chunking.h), rounded up to whole
    // blocks and panels; 0: the driver's choice. For the tests that check that chunking
    // changes no bit; nothing above the kernels sets them.
    int chunk_rows = 0, chunk_cols = 0, chunk_depth = 0;
    // BF16 auto: the slices its first split goes to (3 ... kFp64Slices). The automatic engine
    // asks for all eight where BF16 runs after INT8 refused a call: data that hard need them.
    int fp64_auto_depth = kFp64AutoFirstDepth;
    // INT8 auto: the counts its certificate tests first (0, 0: all), from the call's sample
    // (Int8Decision::first_clean and count + 1): the call's certificate tests those, and all
    // only where they do not settle every entry (int8_gemm.cc certify). The same decision
    // either way, at a fraction of the row tests.
    int int8_counts_from = 0, int8_counts_to = 0;
};

// op(X) = X for TRANS 'N' or 'n'; every other valid TRANS ('T', 'C', either case) is a
// transpose (of the conjugate, for 'C' on complex data).
constexpr bool is_no_trans(char trans) { return trans == 'N' || trans == 'n'; }

// The products i + j < d of a d-slice FP64 split (paper Eq. 15): d (d + 1) / 2.
constexpr int fp64_products_of_depth(int d) { return d * (d + 1) / 2; }

// The sizes are int: the policy forwards calls whose M, N or K do not fit (size:too-large).
// The leading dimensions are 64-bit (an ILP64 caller may pass 2^31 or more), and every
// offset in the kernels is computed in 64 bits (size_t) from them. T is float, double,
// std::complex<float> or std::complex<double>.
template <typename T>
struct GemmArgs {
    char transa, transb;
    int m, n, k;
    T alpha;
    const T* a; std::int64_t lda;
    const T* b; std::int64_t ldb;
    T beta;
    T* c; std::int64_t ldc;
};

// What the FP64 split found about one operand (op(A) by rows, op(B) by columns), in the
// split's scaled units (each row of op(A), column of op(B) multiplied by an exact power of
// two, kernels/pack/pack.h): the facts the caller's checks and the auto certificate need.
struct Fp64SplitFacts {
    int outer = 0;   // rows of op(A) or columns of op(B)
    int slices = 0;  // slices split (the route's depth d; 8 for auto)
    int active = 0;  // slices 0..active-1 are nonzero; the rest are zero everywhere
    // v[r] = ceil(log2 max|X^(r)|) over the whole scaled operand, for r < active: slice r's
    // entries Z_r are multiples of 2^(v[r] - 8) of magnitude <= 2^v[r] (kernels/isa/split.h).
    int v[kFp64Slices] = {};
    // rho[r] >= |X^(r)| entrywise, r = 0..slices: the exact residual after r slices, including
    // the rounding of scaled values below 2^-1022 (kernels/pack/pack.h).
    double rho[kFp64Slices + 1] = {};
    // Auto only (else nullptr), owned by the prepared call: norms[p * outer + o] = sum over
    // row (column) o of |Z_p| / 2^v[p], exact; zero[o] = 1 when row (column) o is all zero.
    const double* norms = nullptr;
    const unsigned char* zero = nullptr;
};

}  // namespace amxblas::kernels

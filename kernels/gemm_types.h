// The plain types every layer shares: the GEMM call, the backend, the run options, the phase
// times. A leaf header: it includes nothing of the project, so policy/ and shim/ can name
// these types without pulling in the kernels' entry points.
#pragma once

#include <cstddef>
#include <cstdint>

namespace amxblas::kernels {

constexpr int kFp32Slices = 3;  // BF16 slices per FP32 value (paper Eq. 8)
constexpr int kFp64Slices = 6;  // Ozaki BF16 slices per FP64 value (paper Eqs. 13-14)

// The micro-kernel backends of kernels/backends.def, in its order: amx (AMX-BF16, TDPBF16PS),
// avx512 (AVX-512 BF16, VDPBF16PS), reference (portable scalar, the SDM's TDPBF16PS).
enum class Backend : int {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) id,
#include "kernels/backends.def"
#undef AMXBLAS_BACKEND
};
constexpr int kBackendCount = 0
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) +1
#include "kernels/backends.def"
#undef AMXBLAS_BACKEND
    ;
inline constexpr Backend kAllBackends[] = {
#define AMXBLAS_BACKEND(id, built, detector, microkernels, unusable_reason) Backend::id,
#include "kernels/backends.def"
#undef AMXBLAS_BACKEND
};

// Time spent in each phase of one call, for the benchmark's breakdown (Figure 10 of the paper).
struct PhaseTimes {
    double split_pack_s = 0;  // split into BF16 slices and packing of the component buffers
    double compute_s = 0;     // component products and reconstruction into C
    // The part of compute_s spent adding panel results into the block accumulator (FP32), or
    // widening the product tiles and adding them into it (FP64): per-thread time, averaged.
    double reconstruct_s = 0;
};

struct RunOptions {
    Backend backend = Backend::reference;
    int fp64_products = 21;              // 6, 10, 15 or 21 (DGEMM only)
    int threads = 1;                     // threads for split, pack and compute (kernels/thread_pool.h)
    std::size_t workspace_cap_bytes = 0; // 0: no cap beyond what malloc grants
    // The caller found the AMX trap-and-emulate harness (tests/amxemu) loaded in this process,
    // so the amx backend runs without AMX hardware. The kernels do not look for it themselves:
    // hardware facts are gathered by the shim (shim/hardware.h, amx_emulator_present()).
    bool amx_emulator = false;
    PhaseTimes* times = nullptr;         // optional
};

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

// What the FP64 split found about one operand (op(A) or op(B)): the facts the caller's
// checks need. More per-call facts belong here as the checks need them.
struct Fp64SplitFacts {
    int active = 0;  // slices 0..active-1 are nonzero; the rest are zero everywhere
    // v[r] = ceil(log2 max|X^(r)|) over the whole operand, for r < active: slice r's entries
    // are multiples of 2^(v[r] - 8) of magnitude <= 2^v[r] (kernels/split.h).
    int v[kFp64Slices] = {};
};

}  // namespace amxblas::kernels

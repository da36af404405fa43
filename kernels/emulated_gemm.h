// The entry points of the BF16 component-product emulation, as the shim sees them.
//
// Semantics are those of column-major BLAS xGEMM:  C := alpha * op(A) * op(B) + beta * C,
// with op(X) = X for trans 'N'/'n' and X^T for 'T'/'t'/'C'/'c'.
//
// Preconditions, checked by the caller (shim/policy) before it routes a call here:
//   - the arguments are valid in the BLAS sense (no xerbla case),
//   - m, n, k >= 1 and alpha != 0 (degenerate calls are forwarded to the real BLAS),
//   - the inputs passed the policy's domain scan.
// Contract on failure: a non-null return value is the forward reason (e.g. "memory:workspace-cap",
// "domain:slice-subnormal"); C has not been touched and the caller forwards the call.
// beta == 0 never reads C (NaN or Inf already in C does not survive).
// Forward reasons returned (static strings):
//   "backend:not-built", "backend:not-runnable"   RunOptions::backend cannot run here (amx also
//                                                 runs when the tests/amxemu harness is loaded)
//   "config:fp64-products"                        fp64_products not 6, 10, 15 or 21
//   "memory:workspace-cap", "memory:alloc-failed" see *_workspace_bytes
//   "domain:nonfinite"                            Inf/NaN in A or B (FP64; the pre-scan's job)
//   "domain:slice-subnormal"                      FP64 split gave a nonzero slice entry below
//                                                 2^-126 (late check, after the pre-scan)
//   "domain:slice-overflow"                       FP64 split gave a slice entry above the
//                                                 largest finite BF16 (ties at (2-2^-7)*2^127)
//   "domain:overflow-risk", "domain:underflow-risk"
//                                                 a retained product of the slices the split
//                                                 found could overflow, or fall below 2^-126
//                                                 (policy/domain.h, check_fp64_slice_exponents)
//   "internal:exception"                          never expected; nothing escapes to C/Fortran
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

namespace amxblas::kernels {

enum class Backend : int {
    reference = 0,  // portable scalar micro-kernel, follows the SDM definition of TDPBF16PS
    avx512 = 1,     // AVX-512 BF16 (VDPBF16PS) micro-kernel
    amx = 2,        // AMX-BF16 (TDPBF16PS) micro-kernel
};

const char* backend_name(Backend b);  // "reference", "avx512", "amx"

// "Was this path built?" and "can it run on this machine?" are separate questions.
bool backend_built(Backend b);
// reference: always; avx512: CPU has AVX512F+BW+BF16 and the OS saves ZMM state;
// amx: CPUID AMX-TILE/AMX-BF16, palette 1 in leaf 0x1D and arch_prctl(ARCH_REQ_XCOMP_PERM)
// succeeds. Computed once, cached, thread-safe.
bool backend_runnable_on_cpu(Backend b);
// True when the trap-and-emulate AMX harness (tests/amxemu) is loaded in this process.
bool amx_emulator_present();

// Time spent in each phase of one call, for the benchmark's breakdown (Figure 10 of the paper).
struct PhaseTimes {
    double split_pack_s = 0;  // split into BF16 slices and packing of the component buffers
    double compute_s = 0;     // component products and reconstruction into C
};

struct RunOptions {
    Backend backend = Backend::reference;
    int fp64_products = 21;              // 6, 10, 15 or 21 (DGEMM only)
    int threads = 1;                     // OpenMP threads for split, pack and compute
    std::size_t workspace_cap_bytes = 0; // 0: no cap beyond what malloc grants
    PhaseTimes* times = nullptr;         // optional
};

// The sizes are int: the policy forwards calls whose M, N or K do not fit (size:too-large).
// The leading dimensions are 64-bit (an ILP64 caller may pass 2^31 or more), and every
// offset in the kernels is computed in 64 bits (size_t) from them.
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

// Bytes one call allocates (computed before any allocation, compared with
// RunOptions::workspace_cap_bytes): the packed BF16 component buffers (3 slices for FP32,
// 6 for FP64, each padded to multiples of 32) plus, per thread, one BM x BN block accumulator
// (FP32 or FP64) and one 32x32 FP32 tile. With threads = 1 that is the single-thread cost.
std::size_t sgemm_workspace_bytes(int m, int n, int k, int threads = 1);
std::size_t dgemm_workspace_bytes(int m, int n, int k, int threads = 1);

// Return nullptr on success, else a static forward-reason string (C untouched).
const char* emulate_sgemm(const GemmArgs<float>& args, const RunOptions& opt);
const char* emulate_dgemm(const GemmArgs<double>& args, const RunOptions& opt);

// Complex GEMM (op also 'C'/'c', the conjugate transpose) as one real GEMM of the real and
// imaginary parts: four real products per slice pair (kernels/complex_gemm.cc). CGEMM uses the
// FP32 method, ZGEMM the FP64 one with opt.fp64_products; same reasons as above.
const char* emulate_cgemm(const GemmArgs<std::complex<float>>& args, const RunOptions& opt);
const char* emulate_zgemm(const GemmArgs<std::complex<double>>& args, const RunOptions& opt);
// Bytes one complex call allocates: those of the real GEMM it becomes (2K deep, 2N wide).
std::size_t cgemm_workspace_bytes(int m, int n, int k, int threads = 1);
std::size_t zgemm_workspace_bytes(int m, int n, int k, int threads = 1);

}  // namespace amxblas::kernels

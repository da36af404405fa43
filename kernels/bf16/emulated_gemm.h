// The entry points of the BF16 component-product emulation, as the layers above see them.
//
// Semantics are those of column-major BLAS xGEMM:  C := alpha * op(A) * op(B) + beta * C,
// with op(X) = X for trans 'N'/'n' and X^T for 'T'/'t'/'C'/'c'.
//
// Preconditions, checked by the caller (the shim, with the policy's decision) before it routes a
// call here:
//   - the arguments are valid in the BLAS sense (no xerbla case),
//   - m, n, k >= 1 and alpha != 0 (degenerate calls are forwarded to the real BLAS),
//   - alpha and beta are finite, and FP32 inputs passed the domain rules on their scan
//     (shim/domain_check.h); FP64 inputs are checked here, by the split.
// Contract on failure: a non-null return value is the forward reason (e.g. "memory:workspace-cap",
// "domain:slice-subnormal"); C has not been touched and the caller forwards the call.
// beta == 0 never reads C (NaN or Inf already in C does not survive).
// Forward reasons returned (static strings):
//   "backend:not-built", "backend:not-runnable"   RunOptions::backend cannot run here (amx also
//                                                 runs when RunOptions::amx_emulator says the
//                                                 amxemu/ harness is loaded)
//   "config:fp64-products"                        fp64_products not 6, 10, 15, 21, 28, 36 or
//                                                 kFp64Auto
//   "memory:workspace-cap", "memory:alloc-failed" see *_workspace_bytes
//   "domain:nonfinite"                            Inf/NaN in A or B (FP64: found by the split's
//                                                 exponent pass, before any other reason)
//   "domain:slice-subnormal", "domain:slice-overflow"
//                                                 FP64 safety net: a normalised slice entry left
//                                                 the BF16 range (cannot happen, split.h)
//   "internal:exception"                          never expected; nothing escapes to C/Fortran
//
// FP32 is one call (emulate_sgemm). FP64 is two (prepare_dgemm, then compute_dgemm), because
// what the split finds decides whether and how the call may run: under auto, the certificate
// (kernels/certificate/) picks the products from it (kernels/bf16/bf16_engine.cc strings the
// phases together):
//
//   PreparedDgemm p;
//   if (const char* why = prepare_dgemm(args, opt, &p)) forward(why);   // C untouched
//   else if (const char* why = certify(p.a, p.b, ...)) forward(why);    // C untouched
//   else compute_dgemm(&p, products);                                    // writes C
//
// prepare_dgemm scans the exponents, allocates and finds what the split of both operands gives
// (chunk by chunk: kernels/bf16/chunking.h), and reports it in p.a and p.b (with
// opt.fp64_products = kFp64Auto: opt.fp64_auto_depth slices and their norms, all eight after
// deepen_fp64_split); under auto, lower_bound_blocks then gives, block by block, one extra BF16
// product for the certificate's lower bound of |A||B|. compute_dgemm splits and packs the
// chunks again as the products need them (a call in one chunk keeps the prepare's), runs the
// chosen products, writes C and recomputes the listed entries in FP64. A PreparedDgemm owns its workspace until it is destroyed; the arguments'
// matrices must not change between the two phases.
#pragma once

#include <complex>
#include <cstddef>
#include <functional>
#include <memory>

#include "kernels/common/gemm_types.h"
#include "kernels/isa/backend.h"

namespace amxblas::kernels {

// Bytes one call allocates (computed before any allocation, compared with
// RunOptions::workspace_cap_bytes), at most kChunkBudgetBytes (48 MiB) whatever the size: the
// chunk buffers of both operands (3 slices for FP32, d = fp64_depth(products) for FP64; each
// padded to whole tiles and K steps of the backend's micro-kernel geometry and staggered by
// 4160 bytes), the accumulators (one per block of a super-block, or one per thread when K is a
// single chunk) and the threads' mr x nr FP32 tiles (one for FP32, eight for FP64), as
// kernels/common/chunk_plan.h plans them. The buffers come from a per-process pool
// (kernels/runtime/workspace.h).
std::size_t sgemm_workspace_bytes(int m, int n, int k, int threads = 1, Backend backend = Backend::reference);
std::size_t dgemm_workspace_bytes(int m, int n, int k, int threads = 1, int products = 21,
                                  Backend backend = Backend::reference);
// Auto: eight slices (the most it may split) and a ninth for |slice 0| (used when the call is
// one chunk).
std::size_t dgemm_auto_workspace_bytes(int m, int n, int k, int threads = 1, Backend backend = Backend::reference);

// 6 -> 3, 10 -> 4, 15 -> 5, 21 -> 6, 28 -> 7, 36 -> 8: the slices d of the products i + j < d
// (paper Eq. 15); anything else -> 0.
int fp64_depth(int products);

// Return nullptr on success, else a static forward-reason string (C untouched).
const char* emulate_sgemm(const GemmArgs<float>& args, const RunOptions& opt);

// One DGEMM between its two phases. Move-only; owns the call's workspace.
class PreparedDgemm {
public:
    PreparedDgemm();
    ~PreparedDgemm();
    PreparedDgemm(PreparedDgemm&&) noexcept;
    PreparedDgemm& operator=(PreparedDgemm&&) noexcept;
    PreparedDgemm(const PreparedDgemm&) = delete;
    PreparedDgemm& operator=(const PreparedDgemm&) = delete;

    Fp64SplitFacts a, b;  // of op(A) and op(B), set by a successful prepare_dgemm

    struct State;  // prepared_dgemm_state.h: the arguments, options, workspace and packed buffers
    std::unique_ptr<State> state;
};

// Phase 1 (the facts it reports are Fp64SplitFacts, kernels/common/gemm_types.h): checks the
// backend and opt.fp64_products, scans the exponents, allocates, and finds the split's facts.
// nullptr on success (then *out holds the call's state and the facts; a fixed count in
// several chunks leaves the facts unset and guesses the scales in compute_dgemm:
// fp64_gemm.cc), else the forward reason. Never touches C.
const char* prepare_dgemm(const GemmArgs<double>& args, const RunOptions& opt, PreparedDgemm* out);
// The same on a call described for the engines (kernels/engine/gemm_call.h: DGEMM's, or a
// ZGEMM's real GEMM), whose writer and repairer compute_dgemm uses.
struct Fp64Gemm;
const char* prepare_fp64(const Fp64Gemm& call, const RunOptions& opt, PreparedDgemm* out);
// Auto only, between the phases: the certificate's lower bound of |A||B|, block by block, never
// whole (kernels/bf16/chunking.h): lhat(i, j), the FP64 sum over the K panels, in order, of
// the exact panel sums of |Z^A_0| |Z^B_0| / 2^(v_A(0) + v_B(0)), one BF16 product computed
// chunk by chunk like the others. visit(i0, j0, rows, cols, acc) gets each block once, on the
// pool's threads, blocks disjoint: lhat(i0 + i, j0 + j) = acc[i * kBlockN + j]. Returns false
// when the call was not prepared under auto.
using LowerBlockVisitor = std::function<void(int i0, int j0, int rows, int cols, const double* acc)>;
bool lower_bound_blocks(PreparedDgemm* prepared, const LowerBlockVisitor& visit);
// Auto only, between the phases, where the certificate needs deeper slices than the prepare
// split: the facts of all eight slices into p.a and p.b (the slices already split, their
// scales and norms, and the lower bound, are unchanged: the split is sequential). Does nothing
// where eight were split already or the call was not prepared under auto. nullptr, else a
// slice-range reason (the safety net of kernels/pack/pack.h); C untouched either way. Its time
// is the certificate's (PhaseTimes), not the prepare's split.
const char* deepen_fp64_split(PreparedDgemm* prepared);

// Phase 2: runs `products` component products (6 ... 36, at most the prepared depth's) on a
// prepared call and writes C; then recomputes the `repairs` entries repair_at[] (i + j * m of
// the real GEMM) in FP64: for DGEMM, inner products in index order, C := alpha * dot + beta *
// C_old; for ZGEMM (whose real GEMM is m x 2n), the complex entry each listed part belongs to,
// both parts (kernels/bf16/complex_gemm.cc). nullptr on success,
// else the forward reason with C untouched ("config:fp64-products" for a count the schedule
// or the prepared slices do not cover, or a call that was not prepared).
const char* compute_dgemm(PreparedDgemm* prepared, int products, const std::size_t* repair_at = nullptr,
                          std::size_t repairs = 0);

// Complex GEMM (op also 'C'/'c', the conjugate transpose) as one real GEMM of the real and
// imaginary parts, 2K deep and 2N wide: four real products per slice pair
// (kernels/bf16/complex_gemm.cc). CGEMM is one call with the FP32 method; ZGEMM is prepared like
// a DGEMM (the facts are those of the parts of op(A) and op(B), in the real GEMM's units:
// m rows, 2n columns, depth 2K), then computed with compute_dgemm. Same reasons and contract
// as above.
const char* emulate_cgemm(const GemmArgs<std::complex<float>>& args, const RunOptions& opt);
const char* prepare_zgemm(const GemmArgs<std::complex<double>>& args, const RunOptions& opt, PreparedDgemm* out);
// Bytes one complex call allocates: those of the real GEMM it becomes.
std::size_t cgemm_workspace_bytes(int m, int n, int k, int threads = 1, Backend backend = Backend::reference);
std::size_t zgemm_workspace_bytes(int m, int n, int k, int threads = 1, Backend backend = Backend::reference);

}  // namespace amxblas::kernels

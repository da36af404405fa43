// The FP64 INT8 engine (Ozaki scheme II on INT8 products; docs/fp64-int8.md): one real GEMM
// op(A) (m x k) times op(B) (k x n), DGEMM's or the real GEMM of a ZGEMM's parts
// (kernels/engine/gemm_call.h), handed back block by block to the call's writer, as the BF16
// engine's blocked driver does (kernels/bf16/blocked_gemm.h).
//
//   1. int8_facts: one read of each operand (exponents, norms, lowest set bits).
//   2. auto only: the magnitude product, block by block, and the certificate
//      (int8_certificate.h) pick the count of moduli and the entries to repair, or forward
//      with accuracy:uncertified. Nothing is split before this.
//   3. the residues of both operands, `count` INT8 products (int8_walk.h), the CRT
//      reconstruction (crt_reconstruct.h), C; then the repairs.
//
// opt.fp64_products: the moduli (kInt8MinModuli .. kInt8MaxModuli) or kFp64Auto. Same contract
// as emulated_gemm.h: nullptr, or the forward reason with C untouched.
#pragma once

#include <complex>

#include "kernels/certificate/fp64_certificate.h"
#include "kernels/engine/gemm_call.h"

namespace amxblas::kernels {

const char* run_int8_fp64_gemm(const Fp64Gemm& call, const RunOptions& opt);

// Steps 1 and 2 of an auto call alone, nothing split or written (the sampled decision,
// kernels/driver/gemm_sample.h): the count auto would pick and the entries failing there.
// nullptr with *out filled, else a forward reason of the facts' or the workspace's.
struct Int8Decision;
const char* int8_fp64_decide(const Fp64Gemm& call, const RunOptions& opt, Int8Decision* out);
// The same on DGEMM's arguments and on ZGEMM's (as the real GEMM of the parts), whose
// certificate asks `structural` about the entries whose lower bound is 0 (in the real GEMM's
// indices).
const char* decide_dgemm_int8(const GemmArgs<double>& args, const RunOptions& opt, const StructuralTest& structural,
                              Int8Decision* out);
const char* decide_zgemm_int8(const GemmArgs<std::complex<double>>& args, const RunOptions& opt,
                              const StructuralTest& structural, Int8Decision* out);

// Bytes one call allocates at most (the larger of its passes), at most kInt8BudgetBytes (56 MiB)
// whatever the size.
std::size_t int8_dgemm_workspace_bytes(int m, int n, int k, int threads, int moduli);

}  // namespace amxblas::kernels

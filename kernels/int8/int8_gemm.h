// The FP64 INT8 engine (Ozaki scheme II on INT8 products; docs/fp64-int8.md): one real GEMM
// op(A) (m x k) times op(B) (k x n), DGEMM's or the real GEMM of a ZGEMM's parts
// (kernels/bf16/complex_gemm.cc), handed back block by block to the caller's writer, as the
// BF16 engine's blocked driver does (kernels/bf16/blocked_gemm.h).
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

#include "kernels/certificate/fp64_certificate.h"
#include "kernels/bf16/blocked_gemm.h"

namespace amxblas::kernels {

struct Int8Gemm {
    OperandView<double> a, b;
    int m = 0, n = 0, k = 0;
    int gamma_terms = 0;  // 0: k
    bool complex_parts = false;  // ZGEMM's real GEMM: the report counts complex entries repaired
    BlockWriter<double> write;
    Fp64Repairer repairer;
    StructuralTest structural;
};

const char* run_int8_fp64_gemm(const Int8Gemm& call, const RunOptions& opt);

// Steps 1 and 2 of an auto call alone, nothing split or written (the sampled decision,
// kernels/driver/gemm_sample.h): the count auto would pick and the entries failing there.
// nullptr with *out filled, else a forward reason of the facts' or the workspace's.
struct Int8Decision;
const char* int8_fp64_decide(const Int8Gemm& call, const RunOptions& opt, Int8Decision* out);

// Bytes one call allocates at most (the larger of its passes), at most kInt8BudgetBytes (56 MiB)
// whatever the size.
std::size_t int8_dgemm_workspace_bytes(int m, int n, int k, int threads, int moduli);

}  // namespace amxblas::kernels

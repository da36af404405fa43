// PreparedDgemm::State, what a prepared DGEMM or ZGEMM holds between its phases (internal:
// fp64_gemm.cc, which fills and runs it, and real_gemm.cc, which frees it when a prepare fails).
#pragma once

#include <vector>

#include "kernels/bf16/blocked_gemm.h"
#include "kernels/bf16/chunking.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/bf16/workspace_layout.h"
#include "kernels/isa/microkernel.h"
#include "kernels/pack/pack.h"
#include "kernels/runtime/workspace.h"

namespace amxblas::kernels {

// Everything a prepared DGEMM (or ZGEMM) carries from its prepare to compute_dgemm: the real
// GEMM's sizes, its operands' views (compute_dgemm splits and packs them again, chunk by
// chunk, with the scales the prepare found), and the writer that puts its blocks into the
// caller's C.
struct PreparedDgemm::State {
    int m = 0, n = 0, k = 0;
    OperandView<double> va{}, vb{};
    BlockWriter<double> write;
    RunOptions opt;
    int threads = 1;
    MicroKernels mk;  // the call's micro-kernel set (kernels_for)
    Chunking chunking{};
    bool single = false;      // one chunk: the prepare's facts pass left it packed (single_chunk)
    bool abs_ready = false;   // single and auto: |Z_0| is in the spare slot (lower_bound_blocks)
    bool speculative = false; // no facts pass yet: compute splits with guessed scales (fp64_gemm.cc)
    bool a_nonzero = false, b_nonzero = false;  // from the exponent scans
    int facts_passes = 0;     // operand_facts runs (PhaseTimes::facts_passes)
    WorkspaceLease ws;
    CallWorkspace cw;
    double split_pack_s = 0;
    Fp64Split sa, sb;
    std::vector<int> row_exps, col_exps;
    std::vector<unsigned char> row_zero, col_zero;  // auto
    std::vector<double> norms_a, norms_b;           // auto
    Fp64Repairer repair;  // set by prepare_dgemm and prepare_zgemm: repairs need the caller's C
};

}  // namespace amxblas::kernels

// SGEMM and DGEMM (emulated_gemm.h) from the BLAS arguments, on the blocked driver
// (blocked_gemm.h): the views of op(A) and op(B), the writer into C and DGEMM's repairs
// (kernels/engine/gemm_call.h; complex_gemm.cc is the same for CGEMM and ZGEMM).
#include "kernels/bf16/blocked_gemm.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/bf16/prepared_dgemm_state.h"

namespace amxblas::kernels {

const char* emulate_sgemm(const GemmArgs<float>& g, const RunOptions& opt) {
    return guarded([&] {
        return run_fp32_gemm(view_a(g), view_b(g), g.m, g.n, g.k, opt,
                             [&g](int i0, int j0, int rows, int cols, const float* acc) {
                                 write_block(g, i0, j0, rows, cols, acc);
                             });
    });
}

const char* prepare_fp64(const Fp64Gemm& call, const RunOptions& opt, PreparedDgemm* out) {
    const char* why = guarded([&]() -> const char* {
        if (const char* w = prepare_fp64_gemm(call.a, call.b, call.m, call.n, call.k, opt, call.write, out)) return w;
        set_fp64_repairer(out, call.repairer);
        return nullptr;
    });
    if (why) *out = PreparedDgemm();  // a failed prepare frees its workspace at once
    return why;
}

const char* prepare_dgemm(const GemmArgs<double>& g, const RunOptions& opt, PreparedDgemm* out) {
    // The writer keeps its own copy of the arguments: it runs in compute_dgemm.
    Fp64Gemm call = fp64_gemm(g);
    call.write = [g](int i0, int j0, int rows, int cols, const double* acc) { write_block(g, i0, j0, rows, cols, acc); };
    return prepare_fp64(call, opt, out);
}

}  // namespace amxblas::kernels

// SGEMM and DGEMM (emulated_gemm.h) from the BLAS arguments: the views of op(A) and op(B), the
// writer into C, and DGEMM's repairs, on the blocked driver (blocked_gemm.h; complex_gemm.cc is
// the same for CGEMM and ZGEMM).
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/bf16/blocked_gemm.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/bf16/prepared_dgemm_state.h"
#include "kernels/int8/int8_gemm.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

char normalise_trans(char t) { return is_no_trans(t) ? 'N' : 'T'; }

// C(i0.., j0..) := alpha * acc + beta * C over one block of rows x cols; acc is row-major with
// row stride kBlockN. beta == 0 writes alpha * acc without reading C.
template <typename T>
void write_block(const GemmArgs<T>& g, int i0, int j0, int rows, int cols, const T* acc) {
    for (int j = 0; j < cols; ++j) {
        T* c = g.c + i0 + std::size_t(j0 + j) * g.ldc;
        if (g.beta == T(0)) {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * acc[i * kBlockN + j];
        } else {
            for (int i = 0; i < rows; ++i) c[i] = g.alpha * acc[i * kBlockN + j] + g.beta * c[i];
        }
    }
}

// DGEMM's repairs: the entries the certificate could not vouch for, as FP64 inner products in
// index order, the computation DGEMM's own error bound describes.
Fp64Repairer dgemm_repairer(const GemmArgs<double>& g) {
    return [g](const std::size_t* repair_at, std::size_t repairs) -> std::function<void(int)> {
        std::vector<double> c_old(repairs);
        for (std::size_t q = 0; q < repairs; ++q) {
            const std::size_t i = repair_at[q] % std::size_t(g.m), j = repair_at[q] / std::size_t(g.m);
            c_old[q] = g.beta == 0.0 ? 0.0 : g.c[i + j * std::size_t(g.ldc)];
        }
        return [g, repair_at, repairs, c_old = std::move(c_old)](int threads) {
            const OperandView<double> va{normalise_trans(g.transa), g.m, g.k, g.a, g.lda};
            const OperandView<double> vb{normalise_trans(g.transb), g.k, g.n, g.b, g.ldb};
            const auto at = [](const OperandView<double>& v, int row, int col) {
                return v.trans == 'N' ? v.x[row + std::size_t(col) * v.ld] : v.x[col + std::size_t(row) * v.ld];
            };
            parallel_for(threads, int(repairs), [&](int q, int) {
                const int i = int(repair_at[q] % std::size_t(g.m)), j = int(repair_at[q] / std::size_t(g.m));
                double dot = 0;
                for (int l = 0; l < g.k; ++l) dot += at(va, i, l) * at(vb, l, j);
                double* c = g.c + i + std::size_t(j) * g.ldc;
                *c = g.beta == 0.0 ? g.alpha * dot : g.alpha * dot + g.beta * c_old[q];
            });
        };
    };
}

// The INT8 engine's view of a DGEMM, without its writer and repairs.
Int8Gemm int8_dgemm(const GemmArgs<double>& g, const StructuralTest& structural) {
    Int8Gemm call;
    call.a = {normalise_trans(g.transa), g.m, g.k, g.a, g.lda};
    call.b = {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb};
    call.m = g.m;
    call.n = g.n;
    call.k = g.k;
    call.structural = structural;
    return call;
}

}  // namespace

const char* emulate_sgemm(const GemmArgs<float>& g, const RunOptions& opt) {
    return guarded([&] {
        return run_fp32_gemm({normalise_trans(g.transa), g.m, g.k, g.a, g.lda},
                             {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, g.m, g.n, g.k, opt,
                             [&g](int i0, int j0, int rows, int cols, const float* acc) {
                                 write_block(g, i0, j0, rows, cols, acc);
                             });
    });
}

const char* emulate_dgemm_int8(const GemmArgs<double>& g, const RunOptions& opt, const StructuralTest& structural) {
    Int8Gemm call = int8_dgemm(g, structural);
    call.write = [&g](int i0, int j0, int rows, int cols, const double* acc) { write_block(g, i0, j0, rows, cols, acc); };
    call.repairer = dgemm_repairer(g);
    return run_int8_fp64_gemm(call, opt);
}

const char* decide_dgemm_int8(const GemmArgs<double>& g, const RunOptions& opt, const StructuralTest& structural,
                              Int8Decision* out) {
    return int8_fp64_decide(int8_dgemm(g, structural), opt, out);
}

const char* prepare_dgemm(const GemmArgs<double>& g, const RunOptions& opt, PreparedDgemm* out) {
    // The writer keeps its own copy of the arguments: it runs in compute_dgemm.
    const char* why = guarded([&]() -> const char* {
        if (const char* w = prepare_fp64_gemm({normalise_trans(g.transa), g.m, g.k, g.a, g.lda},
                                              {normalise_trans(g.transb), g.k, g.n, g.b, g.ldb}, g.m, g.n, g.k, opt,
                                              [g](int i0, int j0, int rows, int cols, const double* acc) {
                                                  write_block(g, i0, j0, rows, cols, acc);
                                              },
                                              out))
            return w;
        set_fp64_repairer(out, dgemm_repairer(g));
        return nullptr;
    });
    if (why) out->state.reset();  // a failed prepare frees its workspace at once
    return why;
}

}  // namespace amxblas::kernels

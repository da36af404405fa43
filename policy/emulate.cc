#include "policy/emulate.h"

#include <climits>

#include "kernels/emulated_gemm.h"
#include "policy/domain.h"

namespace amxblas {

const char* emulate_gemm(const kernels::GemmArgs<float>& args, const kernels::RunOptions& opt) {
    return kernels::emulate_sgemm(args, opt);
}

const char* emulate_gemm(const kernels::GemmArgs<double>& args, const kernels::RunOptions& opt) {
    kernels::PreparedDgemm prepared;
    if (const char* why = kernels::prepare_dgemm(args, opt, &prepared)) return why;
    // The pre-scan bounds the slice exponents from above (v(r) <= v(0) - 9r); a residual that
    // shrinks faster gives finer slices whose products can fall below 2^-126 and be flushed.
    // Checked after the split so that a slice that is itself not a normal BF16 keeps its reason.
    if (const char* why = check_fp64_slice_exponents(prepared.a, prepared.b, opt.fp64_products, args.k))
        return why;
    return kernels::compute_dgemm(&prepared, opt.fp64_products);
}

const char* emulate_gemm(const kernels::GemmArgs<std::complex<float>>& args, const kernels::RunOptions& opt) {
    return kernels::emulate_cgemm(args, opt);
}

const char* emulate_gemm(const kernels::GemmArgs<std::complex<double>>& args, const kernels::RunOptions& opt) {
    kernels::PreparedDgemm prepared;
    if (const char* why = kernels::prepare_zgemm(args, opt, &prepared)) return why;
    // As for DGEMM, on the real GEMM of the parts: 2K terms per product.
    const int depth = args.k > INT_MAX / 2 ? INT_MAX : 2 * args.k;
    if (const char* why = check_fp64_slice_exponents(prepared.a, prepared.b, opt.fp64_products, depth))
        return why;
    return kernels::compute_dgemm(&prepared, opt.fp64_products);
}

}  // namespace amxblas

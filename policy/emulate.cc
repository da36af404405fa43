#include "policy/emulate.h"

#include <chrono>

#include "kernels/emulated_gemm.h"
#include "policy/fp64_certificate.h"
#include "policy/reasons.h"

namespace amxblas {

const char* emulate_gemm(const kernels::GemmArgs<float>& args, const kernels::RunOptions& opt) {
    return kernels::emulate_sgemm(args, opt);
}

// Fixed product counts need no check between the phases: the normalised slices keep every
// product and panel sum in range (kernels/split.h). Auto certifies each entry first.
const char* emulate_gemm(const kernels::GemmArgs<double>& args, const kernels::RunOptions& opt) {
    kernels::PreparedDgemm prepared;
    if (const char* why = kernels::prepare_dgemm(args, opt, &prepared)) return why;
    if (opt.fp64_products != kernels::kFp64Auto) return kernels::compute_dgemm(&prepared, opt.fp64_products);

    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    Fp64Certificate cert;
    const bool ok = fp64_certify(prepared.a, prepared.b, args.k, prepared.lower, args.m, opt.fp64_tol, 3, opt.threads, &cert);
    if (opt.times) {
        const double test_s = std::chrono::duration<double>(Clock::now() - t0).count();
        opt.times->certificate_s += test_s;
        opt.times->certificate_test_s = test_s;
    }
    if (!ok) return reason::accuracy_uncertified;
    if (cert.failing > fp64_repair_limit(args.m, args.n)) return reason::accuracy_uncertified;
    const int products = cert.depth * (cert.depth + 1) / 2;
    if (const char* why = kernels::compute_dgemm(&prepared, products, cert.fail_at.data(), cert.fail_at.size()))
        return why;
    if (opt.fp64_report) {
        opt.fp64_report->products = products;
        opt.fp64_report->margin = cert.margin;
        opt.fp64_report->repaired = cert.failing;
    }
    return nullptr;
}

const char* emulate_gemm(const kernels::GemmArgs<std::complex<float>>& args, const kernels::RunOptions& opt) {
    return kernels::emulate_cgemm(args, opt);
}

const char* emulate_gemm(const kernels::GemmArgs<std::complex<double>>& args, const kernels::RunOptions& opt) {
    // The certificate and its repairs are DGEMM's (policy/fp64_certificate.h): auto does not
    // cover ZGEMM, which is forwarded.
    if (opt.fp64_products == kernels::kFp64Auto) return reason::accuracy_uncertified;
    kernels::PreparedDgemm prepared;
    if (const char* why = kernels::prepare_zgemm(args, opt, &prepared)) return why;
    return kernels::compute_dgemm(&prepared, opt.fp64_products);
}

}  // namespace amxblas

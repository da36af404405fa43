#include "policy/emulate.h"

#include <chrono>
#include <cmath>

#include "kernels/emulated_gemm.h"
#include "policy/fp64_certificate.h"
#include "policy/reasons.h"

namespace amxblas {

const char* emulate_gemm(const kernels::GemmArgs<float>& args, const kernels::RunOptions& opt) {
    return kernels::emulate_sgemm(args, opt);
}

namespace {

// K = 1 under auto with tol <= 1: DGEMM's bound gamma_1 (|A||B|)_ij is one rounding, which the
// certificate's own accumulation term c1 = u (1 + 2 np u) > gamma_1 already exceeds for every
// entry whose row of op(A) and column of op(B) are both nonzero (docs/fp64-certificate.md,
// Section 7), while exact-zero rows and columns pass. So the certificate's verdict is known
// from the nonzero counts alone: more failing entries than fp64_repair_limit means it would
// forward after splitting, packing and one product; this says so first, at O(M + N). Only
// for finite data (anything else keeps the split's domain reason).
bool k1_uncertified(const kernels::GemmArgs<double>& g, double tol) {
    if (g.k != 1 || !(tol <= 1)) return false;
    long rows = 0, cols = 0;
    for (int i = 0; i < g.m; ++i) {
        const double a = (g.transa == 'N' || g.transa == 'n') ? g.a[i] : g.a[std::size_t(i) * g.lda];
        if (!std::isfinite(a)) return false;
        rows += a != 0;
    }
    for (int j = 0; j < g.n; ++j) {
        const double b = (g.transb == 'N' || g.transb == 'n') ? g.b[std::size_t(j) * g.ldb] : g.b[j];
        if (!std::isfinite(b)) return false;
        cols += b != 0;
    }
    return rows * cols > fp64_repair_limit(g.m, g.n);
}

}  // namespace

// Fixed product counts need no check between the phases: the normalised slices keep every
// product and panel sum in range (kernels/split.h). Auto certifies each entry first.
const char* emulate_gemm(const kernels::GemmArgs<double>& args, const kernels::RunOptions& opt) {
    if (opt.fp64_products == kernels::kFp64Auto && k1_uncertified(args, opt.fp64_tol))
        return reason::accuracy_uncertified;
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

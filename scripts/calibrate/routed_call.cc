#include "scripts/calibrate/routed_call.h"
#include "scripts/calibrate/operands.h"

#include <chrono>

#include "kernels/common/fp_environment.h"
#include "kernels/driver/routed_gemm.h"
#include "shim/domain_check.h"

namespace amxblas::calibrate {

template <typename T>
RoutedRun run_routed(const kernels::GemmArgs<T>& args, kernels::Backend backend, int threads, Fp64Route fp64) {
    RoutedRun r;
    kernels::RunOptions opt;
    opt.backend = backend;
    opt.threads = threads;
    opt.fp64_engine = fp64.engine;
    opt.fp64_products = fp64.products;
    opt.fp64_report = &r.report;
    opt.times = &r.phases;
    const kernels::LibraryFpEnvironment own_arithmetic;
    const auto t0 = std::chrono::steady_clock::now();
    r.forwarded = check_domain(args, threads);
    r.scan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.forwarded) r.forwarded = kernels::emulate_gemm(args, opt);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

template RoutedRun run_routed(const kernels::GemmArgs<float>&, kernels::Backend, int, Fp64Route);
template RoutedRun run_routed(const kernels::GemmArgs<double>&, kernels::Backend, int, Fp64Route);
template RoutedRun run_routed(const kernels::GemmArgs<std::complex<float>>&, kernels::Backend, int, Fp64Route);
template RoutedRun run_routed(const kernels::GemmArgs<std::complex<double>>&, kernels::Backend, int, Fp64Route);

namespace {

template <typename Real>
void grow(std::vector<Real>* v, std::size_t values) {
    grow_operand(v, values, 0x2545F4914F6CDD1DULL, Range::positive);
}

template <typename T, typename Real>
RoutedRun run_shape(std::vector<Real>& a, std::vector<Real>& b, std::vector<Real>& c, int m, int n, int k,
                    kernels::Backend backend, int threads, Fp64Route fp64) {
    const std::size_t per = sizeof(T) / sizeof(Real);
    grow(&a, per * std::size_t(m) * k);
    grow(&b, per * std::size_t(k) * n);
    grow(&c, per * std::size_t(m) * n);
    const kernels::GemmArgs<T> g{'N', 'N', m, n, k, T(1), reinterpret_cast<const T*>(a.data()), m,
                                 reinterpret_cast<const T*>(b.data()), k, T(0), reinterpret_cast<T*>(c.data()), m};
    return run_routed(g, backend, threads, fp64);
}

}  // namespace

RoutedRun ShapeOperands::run(int routine, int m, int n, int k, kernels::Backend backend, int threads, Fp64Route fp64) {
    switch (routine) {
        case 0: return run_shape<float>(af_, bf_, cf_, m, n, k, backend, threads, fp64);
        case 1: return run_shape<double>(a_, b_, c_, m, n, k, backend, threads, fp64);
        case 2: return run_shape<std::complex<float>>(af_, bf_, cf_, m, n, k, backend, threads, fp64);
        default: return run_shape<std::complex<double>>(a_, b_, c_, m, n, k, backend, threads, fp64);
    }
}

}  // namespace amxblas::calibrate

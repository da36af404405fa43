// Input classes, error metrics and the exact sampled reference.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/bench.h"
#include "tests/common/rng.h"

namespace amxblas::bench {

double now_s() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

void verdict(bool pass, const char* what) { std::printf("%s  %s\n", pass ? "PASS" : "MISS", what); }

namespace {

// The variant behind a route of the library; nullptr for the baselines.
const kernels::Variant* variant_of(Route r) {
    return kernels::variant_at(static_cast<int>(r) - static_cast<int>(Route::openblas_dgemm) - 1);
}

}  // namespace

const char* route_name(Route r) {
    if (r == Route::openblas_sgemm) return "openblas_sgemm";
    if (r == Route::openblas_dgemm) return "openblas_dgemm";
    const kernels::Variant* v = variant_of(r);
    return v ? v->id : "?";
}

bool route_is_fp64(Route r) {
    const kernels::Variant* v = variant_of(r);
    return v ? v->precision == kernels::Precision::fp64 : r == Route::openblas_dgemm;
}
bool route_is_baseline(Route r) { return r == Route::openblas_sgemm || r == Route::openblas_dgemm; }

int route_slices(Route r) {
    const kernels::Variant* v = variant_of(r);
    return v ? v->slices : 0;
}

int route_products(Route r) {
    const kernels::Variant* v = variant_of(r);
    return v ? v->products : 0;
}

const char* input_name(InputClass c) {
    switch (c) {
        case InputClass::uniform: return "uniform";
        case InputClass::loguniform: return "loguniform";
        case InputClass::cancellation: return "cancellation";
    }
    return "?";
}

const char* input_description(InputClass c) {
    switch (c) {
        case InputClass::uniform: return "A, B uniform in [-1, 1]";
        case InputClass::loguniform:
            return "A, B = +-2^u, u uniform in [-20, 20], random signs (inside the FP64 domain)";
        case InputClass::cancellation:
            return "A(i,2p+1) = A(i,2p) uniform in [-1,1]; B(2p,j) = 2^12 u, B(2p+1,j) = -2^12 u + s, "
                   "u, s uniform in [-1,1]: C is ~2^-12 of |A||B|";
    }
    return "?";
}

void make_inputs(InputClass c, const Shape& s, std::uint64_t seed, std::vector<double>* a,
                 std::vector<double>* b) {
    test::Rng rng(seed);
    const auto unit = [&rng] { return rng.uniform(); };                      // [-1, 1)
    const auto expo = [&rng] { return -20.0 + 40.0 * rng.uniform01(); };  // [-20, 20)
    a->assign(std::size_t(s.m) * s.k, 0.0);
    b->assign(std::size_t(s.k) * s.n, 0.0);
    switch (c) {
        case InputClass::uniform:
            for (double& x : *a) x = unit();
            for (double& x : *b) x = unit();
            break;
        case InputClass::loguniform: {
            auto draw = [&] { return std::copysign(std::exp2(expo()), unit()); };
            for (double& x : *a) x = draw();
            for (double& x : *b) x = draw();
            break;
        }
        case InputClass::cancellation: {
            constexpr double kLarge = 4096.0;  // 2^12
            for (int p = 0; p < s.k; ++p)
                for (int i = 0; i < s.m; ++i)
                    (*a)[i + std::size_t(p) * s.m] = (p % 2) ? (*a)[i + std::size_t(p - 1) * s.m] : unit();
            for (int j = 0; j < s.n; ++j) {
                double* col = b->data() + std::size_t(j) * s.k;
                for (int p = 0; p + 1 < s.k; p += 2) {
                    const double u = kLarge * unit();
                    col[p] = u;
                    col[p + 1] = -u + unit();
                }
                if (s.k % 2) col[s.k - 1] = unit();
            }
            break;
        }
    }
}

MaxErr max_errors(const std::vector<double>& c, int ldc, const ExactSample& ex) {
    MaxErr e;
    for (std::size_t q = 0; q < ex.i.size(); ++q) {
        const double d = std::fabs(c[ex.i[q] + std::size_t(ex.j[q]) * ldc] - ex.value[q]);
        e.abs = std::max(e.abs, d);
        if (ex.absab[q] > 0) e.rel = std::max(e.rel, d / ex.absab[q]);
    }
    return e;
}

template <typename T>
Errors errors_full(const std::vector<T>& c, const std::vector<T>& ref, const std::vector<double>& absab) {
    return test::errors(c, ref, absab);
}

template <typename T>
ExactSample exact_sample(const Shape& s, const std::vector<T>& a, const std::vector<T>& b, int count,
                         std::uint64_t seed) {
    test::Rng rng(seed);
    ExactSample ex;
    for (int q = 0; q < count; ++q) {
        const int i = rng.below(s.m), j = rng.below(s.n);
        __float128 sum = 0, abs_sum = 0;
        for (int p = 0; p < s.k; ++p) {
            const __float128 t = __float128(a[i + std::size_t(p) * s.m]) * __float128(b[p + std::size_t(j) * s.k]);
            sum += t;
            abs_sum += t < 0 ? -t : t;
        }
        ex.i.push_back(i);
        ex.j.push_back(j);
        ex.value.push_back(double(sum));
        ex.absab.push_back(double(abs_sum));
    }
    return ex;
}

template <typename T>
Errors errors_sampled(const std::vector<T>& c, int ldc, const ExactSample& ex) {
    test::ErrorMetrics m;
    for (std::size_t q = 0; q < ex.i.size(); ++q) {
        const double got = double(c[ex.i[q] + std::size_t(ex.j[q]) * ldc]);
        m.add(std::fabs(got - ex.value[q]), std::fabs(ex.value[q]), ex.absab[q]);
    }
    return m.result();
}

template Errors errors_full(const std::vector<float>&, const std::vector<float>&, const std::vector<double>&);
template Errors errors_full(const std::vector<double>&, const std::vector<double>&, const std::vector<double>&);
template ExactSample exact_sample(const Shape&, const std::vector<float>&, const std::vector<float>&, int,
                                  std::uint64_t);
template ExactSample exact_sample(const Shape&, const std::vector<double>&, const std::vector<double>&, int,
                                  std::uint64_t);
template Errors errors_sampled(const std::vector<float>&, int, const ExactSample&);
template Errors errors_sampled(const std::vector<double>&, int, const ExactSample&);

}  // namespace amxblas::bench

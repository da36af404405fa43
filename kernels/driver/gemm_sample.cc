#include "kernels/driver/gemm_sample.h"

#include <algorithm>
#include <type_traits>

#include "kernels/common/chunk_plan.h"
#include "kernels/driver/fp64_engines.h"
#include "kernels/engine/scaled_sample.h"

namespace amxblas::kernels {
namespace {

template <typename T>
T conj_if(T x, bool) { return x; }
template <typename T>
std::complex<T> conj_if(std::complex<T> x, bool conj) { return conj ? std::conj(x) : x; }

// Index s of count evenly spaced in 0 .. total - 1: the middle of its share.
int spaced(int s, int count, int total) { return int((2 * std::int64_t(s) + 1) * total / (2 * std::int64_t(count))); }

}  // namespace

template <typename T>
bool sample_gemm(const GemmArgs<T>& g, const RunOptions& opt, GemmSample<T>* out) {
    const long entries = long(g.m) * g.n;
    int r = std::min(g.m, kSampleSide), c = std::min(g.n, kSampleSide);
    while (long(r) * c * kSampleShare > entries) (r >= c ? r : c) /= 2;
    if (long(r) * c < kSampleMin) return false;
    const std::size_t k = std::size_t(g.k);
    // The real GEMM the engines certify: ZGEMM's is r x 2c x 2K (complex_gemm.cc).
    const int parts = std::is_same_v<T, double> ? 1 : 2;
    std::size_t engines = sample_screen_bytes(r, c, g.k, parts);
    for (int e = 0; e < kFp64EngineCount; ++e)
        engines = std::max(engines, fp64_engine_ops(static_cast<Fp64Engine>(e)).sample_bytes(r, parts * c, parts * g.k, opt));
    const std::size_t copies = ((std::size_t(r) + c) * k * sizeof(T) + 63) / 64 * 64;
    // No more than a call's own chunk budget (a very deep K is not sampled), and within its cap.
    if (copies + engines > kChunkBudgetBytes) return false;
    if (lease_workspace(copies + engines, opt.workspace_cap_bytes, &out->lease)) return false;
    out->arena.emplace(static_cast<char*>(out->lease.data()) + copies, engines);
    T* a = static_cast<T*>(out->lease.data());
    T* b = a + std::size_t(r) * k;
    const bool a_n = is_no_trans(g.transa), b_n = is_no_trans(g.transb);
    const bool a_conj = g.transa == 'C' || g.transa == 'c', b_conj = g.transb == 'C' || g.transb == 'c';
    // a(s, l) = op(A)(I[s], l), column-major r x K. With A untransposed its sampled rows are
    // read a column at a time: each column's r values lie within a few cache lines, and the
    // columns follow one another through memory (row by row, each value was a line of its own
    // a column's stride away: a third of a forwarded N = 256 attempt).
    std::size_t rows[kSampleSide];
    for (int s = 0; s < r; ++s) rows[s] = std::size_t(spaced(s, r, g.m));
    if (a_n) {
        for (std::size_t l = 0; l < k; ++l)
            for (int s = 0; s < r; ++s) a[s + l * r] = conj_if(g.a[rows[s] + l * g.lda], a_conj);
    } else {
        for (int s = 0; s < r; ++s)
            for (std::size_t l = 0; l < k; ++l) a[s + l * r] = conj_if(g.a[l + rows[s] * g.lda], a_conj);
    }
    for (int t = 0; t < c; ++t) {  // b(l, t) = op(B)(l, J[t]), column-major K x c
        const std::size_t j = std::size_t(spaced(t, c, g.n));
        for (std::size_t l = 0; l < k; ++l)
            b[l + t * k] = conj_if(b_n ? g.b[l + j * g.ldb] : g.b[j + l * g.ldb], b_conj);
    }
    out->args = GemmArgs<T>{'N', 'N', r, c, g.k, T(1), a, r, b, std::int64_t(k), T(0), nullptr, r};
    return true;
}

template bool sample_gemm(const GemmArgs<double>&, const RunOptions&, GemmSample<double>*);
template bool sample_gemm(const GemmArgs<std::complex<double>>&, const RunOptions&, GemmSample<std::complex<double>>*);

}  // namespace amxblas::kernels

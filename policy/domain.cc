#include "policy/domain.h"

#include <cmath>

namespace amxblas {

namespace {

bool is_no_trans(char t) { return t == 'N' || t == 'n'; }

// Visits every entry of op(X) for an (rows x cols) operand stored column-major with ld.
template <typename T, typename Pred>
bool all_entries(char trans, int rows, int cols, const T* x, int ld, Pred ok) {
    const int stored_rows = is_no_trans(trans) ? rows : cols;
    const int stored_cols = is_no_trans(trans) ? cols : rows;
    for (int j = 0; j < stored_cols; ++j) {
        const T* col = x + static_cast<long>(j) * ld;
        for (int i = 0; i < stored_rows; ++i)
            if (!ok(col[i])) return false;
    }
    return true;
}

}  // namespace

const char* check_sgemm_domain(const kernels::GemmArgs<float>& a) {
    auto finite = [](float v) { return std::isfinite(v); };
    if (!all_entries(a.transa, a.m, a.k, a.a, a.lda, finite) ||
        !all_entries(a.transb, a.k, a.n, a.b, a.ldb, finite))
        return "domain:nonfinite";
    return nullptr;
}

const char* check_dgemm_domain(const kernels::GemmArgs<double>& a, int) {
    auto finite = [](double v) { return std::isfinite(v); };
    if (!all_entries(a.transa, a.m, a.k, a.a, a.lda, finite) ||
        !all_entries(a.transb, a.k, a.n, a.b, a.ldb, finite))
        return "domain:nonfinite";
    return nullptr;
}

}  // namespace amxblas

// The FP64 exponent scan (pack.h, fp64_outer_exponents): per-row and per-column exponents of
// op(X), real and complex.
#include "kernels/pack/fp64_exponents.h"

#include <cfloat>

#include "kernels/common/reasons.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

// A complex view's rows of op(A') (complex_a) are op(A)'s rows, its columns 2j and 2j + 1 of
// op(B') (complex_b) both hold the parts of op(B)'s column j: each gets the exponent of the
// largest part of that complex row or column.
const char* complex_outer_exponents(const OperandView<double>& x, bool as_rows, int threads, int* exps, bool* nonzero,
                                    unsigned char* zero) {
    const bool is_a = x.kind == Interleave::complex_a;
    const int crows = is_a ? x.rows : x.rows / 2, ccols = x.cols / 2;
    const int couter = as_rows ? crows : ccols, clen = as_rows ? ccols : crows;
    const int per = (is_a && as_rows) ? 1 : 2;  // op(X') rows or columns per complex one
    PerParticipant<ExponentPartial> part(std::max(1, threads));
    parallel_for(threads, couter, [&](int o, int who) {
        double m = 0;
        bool nf = false;
        for (int l = 0; l < clen; ++l) {
            const int r = as_rows ? o : l, c = as_rows ? l : o;
            const std::size_t e = x.trans == 'N' ? r + std::size_t(c) * x.ld : c + std::size_t(r) * x.ld;
            for (int h = 0; h < 2; ++h) {
                const double a = std::fabs(x.x[2 * e + h]);
                nf = nf || !(a <= DBL_MAX);
                m = a > m ? a : m;
            }
        }
        part[who].bad = part[who].bad || nf;
        part[who].any = part[who].any || m > 0;
        for (int q = 0; q < per; ++q) {
            exps[o * per + q] = m > 0 ? ceil_log2(m) : 0;
            if (zero) zero[o * per + q] = m == 0;
        }
    });
    bool bad = false, any = false;
    for (const ExponentPartial& pp : part) {
        bad = bad || pp.bad;
        any = any || pp.any;
    }
    *nonzero = any;
    return bad ? reason::domain_nonfinite : nullptr;
}

}  // namespace

const char* fp64_outer_exponents(const OperandView<double>& x, bool as_rows, int threads, int* exps, bool* nonzero,
                                 unsigned char* zero) {
    if (x.kind != Interleave::real) return complex_outer_exponents(x, as_rows, threads, exps, nonzero, zero);
    const int outer = as_rows ? x.rows : x.cols, len = as_rows ? x.cols : x.rows;
    // op(X)'s rows are stored columns when transposed; op(X)'s columns are stored columns when not.
    const bool contiguous = as_rows == (x.trans != 'N');
    const std::size_t ld = std::size_t(x.ld);
    const SplitKernels& sk = split_kernels();
    ExponentScan scan(exps, zero, threads);
    const auto record = [&](int o, std::uint64_t m, int who) { scan.record(o, m, who); };
    if (contiguous) {
        parallel_for(threads, outer, [&](int o, int who) { record(o, sk.absbits_max(x.x + std::size_t(o) * ld, len), who); });
    } else {
        // Each stored column is read front to back into per-participant maxima of kRows outer
        // indices (16 KiB: in L1), kCols columns a task.
        constexpr int kRows = 2048, kCols = 32;
        const int row_chunks = (outer + kRows - 1) / kRows, col_chunks = (len + kCols - 1) / kCols;
        const int participants = std::max(1, std::min(threads, row_chunks * col_chunks));
        // Kept per calling thread from call to call (pack_scratch): allocated afresh, it
        // reached a fresh heap page in the second routed DGEMM of a process
        // (kernels_second_call_test).
        std::vector<std::uint64_t>& m = pack_scratch().maxima;
        m.assign(std::size_t(participants) * outer, 0);
        parallel_for(threads, row_chunks * col_chunks, [&](int c, int who) {
            const int o0 = (c % row_chunks) * kRows, l0 = (c / row_chunks) * kCols;
            sk.absbits_max_lanes(x.x + o0 + std::size_t(l0) * ld, ld, std::min(kCols, len - l0), std::min(kRows, outer - o0),
                                 m.data() + std::size_t(who) * outer + o0);
        });
        for (int o = 0; o < outer; ++o) {
            std::uint64_t mo = m[o];
            for (int w = 1; w < participants; ++w) mo = std::max(mo, m[std::size_t(w) * outer + o]);
            record(o, mo, 0);
        }
    }
    *nonzero = scan.any();
    return scan.bad() ? reason::domain_nonfinite : nullptr;
}

PackScratch& pack_scratch() {
    thread_local PackScratch s;
    return s;
}


}  // namespace amxblas::kernels

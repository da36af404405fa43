// The FP64 split's facts, chunk by chunk (fp64_facts.h).
#include "kernels/bf16/fp64_facts.h"

#include <algorithm>
#include <vector>

#include "kernels/common/reasons.h"
#include "kernels/bf16/workspace_layout.h"
#include "kernels/pack/pack_fp64.h"

namespace amxblas::kernels {
namespace {

int rank_of(const char* why) {
    return why == reason::domain_slice_overflow ? 2 : why == reason::domain_slice_subnormal ? 1 : 0;
}

template <bool IsA>
const char* split_facts(const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp, PackedOperand buf,
                        int outer_chunk, int k_chunk, const SplitKernels& sk, int threads) {
    const int outer = IsA ? x.rows : x.cols, depth = IsA ? x.cols : x.rows;
    std::vector<double> chunk_norms(sp->norms ? std::size_t(buf.slices) * outer_chunk : 0);
    const auto pack_all = [&](const Fp64Scales& guess) {
        const char* why = nullptr;
        double resid[kFp64Slices + 1] = {};
        bool subnormal = false;
        if (sp->norms) std::fill(sp->norms, sp->norms + std::size_t(guess.slices) * outer, 0.0);
        for (int o0 = 0; o0 < outer; o0 += outer_chunk)
            for (int k0 = 0; k0 < depth; k0 += k_chunk) {
                const int no = std::min(outer_chunk, outer - o0), kc = std::min(k_chunk, depth - k0);
                shape_chunk(&buf, IsA, no, kc);
                const OperandView<double> part = IsA ? sub_view(x, o0, no, k0, kc) : sub_view(x, k0, kc, o0, no);
                double r[kFp64Slices + 1];
                bool sub = false;
                const char* w = pack_fp64<IsA>(part, exps ? exps + o0 : nullptr, guess, buf, sk, threads, r,
                                               sp->norms ? chunk_norms.data() : nullptr, &sub);
                if (rank_of(w) > rank_of(why)) why = w;
                for (int t = 0; t <= kFp64Slices; ++t) resid[t] = std::max(resid[t], r[t]);
                subnormal = subnormal || sub;
                if (sp->norms)
                    for (int t = 0; t < guess.slices; ++t)
                        for (int o = 0; o < no; ++o) sp->norms[std::size_t(t) * outer + o0 + o] += chunk_norms[std::size_t(t) * no + o];
            }
        std::copy(resid, resid + kFp64Slices + 1, sp->resid);
        sp->subnormal_scaled = subnormal;
        return why;
    };
    return speculate_scales(nonzero, buf.slices, sp, pack_all);
}

}  // namespace

const char* fp64_split_facts(bool is_a, const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                             PackedOperand buf, int outer_chunk, int k_chunk, const SplitKernels& sk, int threads) {
    return is_a ? split_facts<true>(x, exps, nonzero, sp, buf, outer_chunk, k_chunk, sk, threads)
                : split_facts<false>(x, exps, nonzero, sp, buf, outer_chunk, k_chunk, sk, threads);
}

}  // namespace amxblas::kernels

// The routed call's pipeline, the same for every FP64 engine of kernels/common/engines.def:
// under auto, the sample first (gemm_sample.h, sample_screen.h), then the engines in the
// table's order until one runs the call; with a fixed count, the one engine that count is for
// (fp64_engines.h). FP32 runs on the BF16 component products, its one method.
#include "kernels/driver/routed_gemm.h"

#include <complex>
#include <type_traits>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/certificate/fp64_structural_zeros.h"
#include "kernels/common/reasons.h"
#include "kernels/driver/fp64_engines.h"
#include "kernels/driver/gemm_sample.h"
#include "kernels/driver/sample_screen.h"
#include "kernels/engine/guard.h"

namespace amxblas::kernels {

const char* emulate_gemm(const GemmArgs<float>& args, const RunOptions& opt) {
    return emulate_sgemm(args, opt);
}

const char* emulate_gemm(const GemmArgs<std::complex<float>>& args, const RunOptions& opt) {
    return emulate_cgemm(args, opt);
}

namespace {

// The structural-zero tests of a call, in its real GEMM's indices: column jr of a ZGEMM's real
// GEMM holds parts of C's column jr / 2, and a complex entry zero by structure (each term has a
// complex factor 0) makes both its parts so, term by term.
template <typename T>
StructuralTest structural_test(StructuralZeros<T>& zeros) {
    constexpr int parts = std::is_same_v<T, double> ? 1 : 2;
    return {[&zeros](int i, int j) { return zeros.spans_apart(i, j / parts); },
            [&zeros](int i, int j) { return zeros.terms_zero(i, j / parts); }};
}

// Auto, before an engine pays for its certificate on the whole call: a sample of C's entries
// (gemm_sample.h) is certified by each engine auto would try, at the count that engine would
// pick. When more than half of the sampled entries fail for every one of them, the call is
// forwarded (accuracy:uncertified) at the sample's cost. The whole call forwards from 1/16
// failing (fp64_repair_limit): the factor of 8 between the two is the sample's margin. A call
// whose sample passes runs as before, so the sample changes no routed result. The sample is a
// GEMM of its own, certified as the call would be: DGEMM's r x c entries at depth K; ZGEMM's
// 2 r c parts at depth 2K, each against gamma_{K+1}. An engine may leave hints for the call's
// own certificate in *run (Fp64EngineOps::decide_sample).
template <typename T>
bool sample_uncertified(const GemmArgs<T>& g, const RunOptions& opt, const Fp64EngineChain& chain, RunOptions* run) {
    constexpr int parts = std::is_same_v<T, double> ? 1 : 2;
    if (parts == 1 && g.k == 1) return false;  // BF16's K = 1 test decides those at O(M + N)
    GemmSample<T> sample;
    if (!sample_gemm(g, opt, &sample)) return false;
    const GemmArgs<T>& s = sample.args;
    RunOptions one = opt;  // the sample is small: one thread; nothing of it is timed or reported
    one.threads = 1;
    one.times = nullptr;
    one.fp64_report = nullptr;
    const long entries = parts * sample.entries();
    const auto most_fail = [entries](long failing) { return 2 * failing > entries; };
    // The screen first (sample_screen.h): every entry it counts for an engine fails that
    // engine's certificate below as well, so where it counts most of the sample for every engine
    // tried, so would they, and they need not run.
    const SampleScreen screen = screen_sample(s, one, chain.tried, entries / 2);
    bool screened_out = true;
    for (int q = 0; q < chain.count; ++q) {
        const long failing = screen.of(chain.engine[q]);
        screened_out = screened_out && failing >= 0 && most_fail(failing);
    }
    if (screened_out) return true;
    StructuralZeros<T> zeros(s);
    Fp64Gemm call = fp64_gemm(s);
    call.structural = structural_test(zeros);
    for (int q = 0; q < chain.count; ++q) {
        RunOptions o = one;
        o.fp64_refused_before = q > 0;
        long failing = 0;
        if (fp64_engine_ops(chain.engine[q]).decide_sample(call, o, &failing, run)) return false;
        if (!most_fail(failing)) return false;
    }
    return true;
}

// The call on its engines: each tried in turn gets fresh structural tests (their term test
// spends a budget as it is asked), and one that refuses for accuracy passes the call on under
// the automatic engine.
template <typename T>
const char* run_fp64(const GemmArgs<T>& args, const RunOptions& asked, const Fp64EngineChain& chain) {
    if (std::is_same_v<T, std::complex<double>> && complex_too_large(args.n, args.k))
        return reason::memory_alloc_failed;
    Fp64Gemm call = fp64_gemm(args);
    RunOptions opt = asked;
    const char* why = nullptr;
    for (int q = 0; q < chain.count; ++q) {
        StructuralZeros<T> zeros(args);
        call.structural = structural_test(zeros);
        opt.fp64_refused_before = q > 0;
        why = fp64_engine_ops(chain.engine[q]).run(call, opt);
        if (!why && opt.fp64_report) opt.fp64_report->engine = chain.engine[q];
        if (!chain.goes_on || why != reason::accuracy_uncertified) return why;
    }
    return why;
}

// Auto: the sample first (sample_uncertified), then the engines unless the sample forwards.
// The sample's time counts as the certificate's (PhaseTimes, zeroed first: the engines set
// only the phases they ran).
template <typename T>
const char* emulate_fp64(const GemmArgs<T>& args, const RunOptions& opt) {
    const Fp64EngineChain chain = fp64_engine_chain(opt);
    if (opt.fp64_products != kFp64Auto) return run_fp64(args, opt, chain);
    if (opt.times) *opt.times = PhaseTimes{};
    const double t0 = now_s();
    RunOptions sampled = opt;
    const bool refused = sample_uncertified(args, opt, chain, &sampled);
    const double sample_s = now_s() - t0;
    const char* why = refused ? reason::accuracy_uncertified : run_fp64(args, sampled, chain);
    if (opt.times) opt.times->certificate_s += sample_s;
    return why;
}

}  // namespace

const char* emulate_gemm(const GemmArgs<double>& args, const RunOptions& opt) { return emulate_fp64(args, opt); }

const char* emulate_gemm(const GemmArgs<std::complex<double>>& args, const RunOptions& opt) {
    return emulate_fp64(args, opt);
}

}  // namespace amxblas::kernels

#include "kernels/driver/routed_gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "kernels/bf16/emulated_gemm.h"
#include "kernels/driver/gemm_sample.h"
#include "kernels/driver/sample_screen.h"
#include "kernels/certificate/fp64_certificate.h"
#include "kernels/certificate/fp64_structural_zeros.h"
#include "kernels/common/reasons.h"
#include "kernels/bf16/macro_kernel.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {

const char* emulate_gemm(const GemmArgs<float>& args, const RunOptions& opt) {
    return emulate_sgemm(args, opt);
}

namespace {

// K = 1 under auto with tol <= 1: DGEMM's bound gamma_1 (|A||B|)_ij is one rounding, which the
// certificate's own accumulation term c1 = u (1 + 2 np u) > gamma_1 already exceeds for every
// entry whose row of op(A) and column of op(B) are both nonzero (docs/fp64-certificate.md,
// Section 7), while exact-zero rows and columns pass. So the certificate's verdict is known
// from the nonzero counts alone: more failing entries than fp64_repair_limit means it would
// forward after splitting, packing and one product; this says so first, at O(M + N). Only
// for finite data (anything else keeps the split's domain reason).
bool k1_uncertified(const GemmArgs<double>& g, double tol) {
    if (g.k != 1 || !(tol <= 1)) return false;
    long rows = 0, cols = 0;
    for (int i = 0; i < g.m; ++i) {
        const double a = is_no_trans(g.transa) ? g.a[i] : g.a[std::size_t(i) * g.lda];
        if (!std::isfinite(a)) return false;
        rows += a != 0;
    }
    for (int j = 0; j < g.n; ++j) {
        const double b = is_no_trans(g.transb) ? g.b[std::size_t(j) * g.ldb] : g.b[j];
        if (!std::isfinite(b)) return false;
        cols += b != 0;
    }
    return rows * cols > fp64_repair_limit(g.m, g.n);
}

// The BF16 certificate's first pass on a call prepared under auto: the depth it picks and the
// entries failing there, in *cert (no fail_at). Where entries fail at the depth picked and the
// prepare split fewer than eight slices (RunOptions::fp64_auto_depth), it splits all eight
// (deepen_fp64_split) and decides again, which is the decision eight slices from the start give
// (docs/fp64-certificate.md, Section 6). The term-by-term test of structural zeros spends a
// budget as it is asked (fp64_structural_zeros.h): the second decision asks the same entries in
// the same order and is given the first decision's answers. nullptr once decided; else
// accuracy:uncertified where no depth applies (begin refuses), or the deeper split's reason.
const char* bf16_decide(PreparedDgemm* prepared, int k, int gamma_terms, const RunOptions& opt,
                        const StructuralTest& structural, Fp64BlockCertificate* block_cert, Fp64Certificate* cert) {
    StructuralTest asked{structural.by_spans, nullptr};
    if (structural.by_terms) {
        const std::uint64_t m = std::uint64_t(prepared->a.outer);
        auto answers = std::make_shared<std::unordered_map<std::uint64_t, bool>>();
        asked.by_terms = [answers, m, by_terms = structural.by_terms](int i, int j) {
            const std::uint64_t at = std::uint64_t(i) + std::uint64_t(j) * m;
            const auto known = answers->find(at);
            return known != answers->end() ? known->second : ((*answers)[at] = by_terms(i, j));
        };
    }
    for (;;) {
        if (!block_cert->begin(prepared->a, prepared->b, k, opt.fp64_tol, 3, opt.threads, gamma_terms, asked))
            return reason::accuracy_uncertified;
        lower_bound_blocks(prepared, [&](int i0, int j0, int rows, int cols, const double* acc) {
            block_cert->add_block(i0, j0, rows, cols, acc, kBlockN, 1);
        });
        block_cert->decide(cert);
        if (cert->failing == 0 || prepared->a.slices == kFp64Slices) return nullptr;
        if (const char* why = deepen_fp64_split(prepared)) return why;
    }
}

// Auto, after a successful prepare: the certificate on what the split found and on the lower
// bound of |A||B| (lower_bound_blocks, block by block) picks the products and the entries to
// repair, or the call forwards (C untouched). m, n, k: the real GEMM's sizes; gamma_terms: the
// n of the bound gamma_n (0: k, DGEMM's); entries_of turns the failing real entries into the
// count of C's entries recomputed, for the log. structural: the certificate's tests for entries
// zero by structure (fp64_structural_zeros.h), in the real GEMM's indices.
template <typename EntriesOf>
const char* certify_and_compute(PreparedDgemm* prepared, int m, int n, int k, int gamma_terms, const RunOptions& opt,
                                StructuralTest structural, EntriesOf&& entries_of) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    Fp64BlockCertificate block_cert;
    Fp64Certificate cert;
    if (const char* why = bf16_decide(prepared, k, gamma_terms, opt, structural, &block_cert, &cert)) return why;
    const bool repairable = cert.failing <= fp64_repair_limit(m, n);
    if (cert.failing > 0 && repairable) {
        // The failing entries, from the lower bound computed once more: it is never kept whole.
        std::mutex hold;
        lower_bound_blocks(prepared, [&](int i0, int j0, int rows, int cols, const double* acc) {
            std::vector<std::size_t> mine;
            block_cert.failing_in(i0, j0, rows, cols, acc, kBlockN, 1, &mine);
            std::lock_guard<std::mutex> lock(hold);
            cert.fail_at.insert(cert.fail_at.end(), mine.begin(), mine.end());
        });
        std::sort(cert.fail_at.begin(), cert.fail_at.end());
    }
    if (opt.times) {
        const double test_s = std::chrono::duration<double>(Clock::now() - t0).count();
        opt.times->certificate_s = test_s;
        opt.times->certificate_test_s = test_s;
    }
    if (!repairable) return reason::accuracy_uncertified;
    const int products = fp64_products_of_depth(cert.depth);
    if (const char* why = compute_dgemm(prepared, products, cert.fail_at.data(), cert.fail_at.size()))
        return why;
    if (opt.fp64_report) {
        opt.fp64_report->products = products;
        opt.fp64_report->margin = cert.margin;
        opt.fp64_report->repaired = entries_of(cert);
    }
    return nullptr;
}

// The INT8 engine runs first when asked for, and under the automatic engine when the count is
// auto (a fixed count keeps the BF16 engine's meaning: AMXBLAS_FP64_PRODUCTS=21 is the paper's
// experiment).
// Under the automatic engine INT8 goes first because its products cost half BF16's per
// multiply-add where it has its own kernel (TDPBSSD, VPDPBUSD) and it needs fewer of them
// (docs/cost-model.md); a backend that would run it on the portable INT8 kernel (an AVX-512
// BF16 CPU without VNNI) keeps BF16's auto.
bool takes_int8(const RunOptions& opt) {
    if (opt.fp64_engine == Fp64Engine::int8) return true;
    if (opt.fp64_engine != Fp64Engine::automatic || opt.fp64_products != kFp64Auto) return false;
    const Int8Product own = kernels_for(opt).product_s8;
    return opt.backend == Backend::reference || (own && own != reference_product_s8);
}

// Under the automatic engine, a call the INT8 certificate cannot pass goes on to the BF16
// engine's auto, whose bound is different; anything else is final.
bool bf16_after_int8(const RunOptions& opt, const char* why) {
    return opt.fp64_engine == Fp64Engine::automatic && why == reason::accuracy_uncertified;
}

// The engines' decisions on DGEMM's and ZGEMM's arguments, for sample_uncertified.
const char* decide_int8(const GemmArgs<double>& g, const RunOptions& opt, const StructuralTest& t, Int8Decision* d) {
    return decide_dgemm_int8(g, opt, t, d);
}
const char* decide_int8(const GemmArgs<std::complex<double>>& g, const RunOptions& opt, const StructuralTest& t,
                        Int8Decision* d) {
    return decide_zgemm_int8(g, opt, t, d);
}
const char* prepare(const GemmArgs<double>& g, const RunOptions& opt, PreparedDgemm* p) {
    return prepare_dgemm(g, opt, p);
}
const char* prepare(const GemmArgs<std::complex<double>>& g, const RunOptions& opt, PreparedDgemm* p) {
    return prepare_zgemm(g, opt, p);
}

// Auto, before an engine pays for its certificate on the whole call: a sample of C's entries
// (gemm_sample.h) is certified by each engine auto would try, at the count that engine would
// pick. When more than half of the sampled entries fail for every one of them, the call is
// forwarded (accuracy:uncertified) at the sample's cost. The whole call forwards from 1/16
// failing (fp64_repair_limit): the factor of 8 between the two is the sample's margin. A call
// whose sample passes runs as before, so the sample changes no routed result. The sample is a
// GEMM of its own, certified as the call would be: DGEMM's r x c entries at depth K; ZGEMM's
// 2 r c parts at depth 2K, each against gamma_{K+1}. Where BF16's certificate on the sample
// needed all eight slices, *bf16_depth becomes kFp64Slices: the call's own certificate is
// likely to need them too and splits them at once (RunOptions::fp64_auto_depth; the same
// decision either way, docs/fp64-certificate.md, Section 6). Where INT8's certificate passed
// every sampled entry, the counts the call's certificate tests first go to *run
// (RunOptions::int8_counts_from, int8_counts_to): a sampled entry is the call's entry, with
// the same facts and the same test, so the call fails somewhere below the sample's first
// clean count as the sample does.
template <typename T>
bool sample_uncertified(const GemmArgs<T>& g, const RunOptions& opt, RunOptions* run) {
    constexpr int parts = std::is_same_v<T, double> ? 1 : 2;
    if (parts == 1 && g.k == 1) return false;  // k1_uncertified decides those at O(M + N)
    GemmSample<T> sample;
    if (!sample_gemm(g, opt, &sample)) return false;
    const GemmArgs<T>& s = sample.args;
    RunOptions one = opt;  // the sample is small: one thread; nothing of it is timed or reported
    one.threads = 1;
    one.times = nullptr;
    one.fp64_report = nullptr;
    const auto most_fail = [&sample](long failing) { return 2 * failing > parts * sample.entries(); };
    // The screen first (sample_screen.h): every entry it counts for an engine fails that
    // engine's certificate below as well, so where it counts most of the sample for every engine
    // tried, so would they, and they need not run.
    const bool int8 = takes_int8(opt), bf16 = !int8 || bf16_after_int8(opt, reason::accuracy_uncertified);
    if (int8) one.fp64_auto_depth = kFp64Slices;  // BF16 after INT8, as run_dgemm and run_zgemm
    const long half = parts * sample.entries() / 2;  // most_fail(f) is f > half
    const SampleScreen screen = screen_sample(s, one, int8, bf16, half);
    const auto screened_out = [&most_fail](long failing) { return failing >= 0 && most_fail(failing); };
    if ((!int8 || screened_out(screen.int8_failing)) && (!bf16 || screened_out(screen.bf16_failing))) return true;
    StructuralZeros<T> zeros(s);
    const StructuralTest structural{[&zeros](int i, int j) { return zeros.spans_apart(i, j / parts); },
                                    [&zeros](int i, int j) { return zeros.terms_zero(i, j / parts); }};
    if (int8) {
        Int8Decision d;
        if (decide_int8(s, one, structural, &d)) return false;
        if (!most_fail(d.failing)) {
            if (d.failing == 0 && d.first_clean > 0) {  // first_clean 0: tol gamma_n < u, never settled
                run->int8_counts_from = d.first_clean;
                run->int8_counts_to = std::min(d.count + 1, kInt8MaxModuli);
            }
            return false;
        }
        if (!bf16) return true;
    }
    PreparedDgemm prepared;
    if (prepare(s, one, &prepared)) return false;
    Fp64BlockCertificate block_cert;
    Fp64Certificate cert;
    const int gamma_terms = parts == 1 ? 0 : g.k + 1;
    const char* why = bf16_decide(&prepared, parts * g.k, gamma_terms, one, structural, &block_cert, &cert);
    if (!int8 && prepared.a.slices == kFp64Slices) run->fp64_auto_depth = kFp64Slices;
    return why != nullptr || most_fail(cert.failing);
}

// Fixed product counts need no check between the phases: the normalised slices keep every
// product and panel sum in range (kernels/isa/split.h). Auto certifies each entry first.
const char* run_dgemm(const GemmArgs<double>& args, const RunOptions& asked) {
    RunOptions opt = asked;
    if (takes_int8(opt)) {
        StructuralZeros<double> zeros(args);
        const char* why = emulate_dgemm_int8(args, opt, {[&zeros](int i, int j) { return zeros.spans_apart(i, j); },
                                                         [&zeros](int i, int j) { return zeros.terms_zero(i, j); }});
        if (!bf16_after_int8(opt, why)) return why;
        opt.fp64_auto_depth = kFp64Slices;  // data INT8 refused need BF16's deepest slices
    }
    if (opt.fp64_products == kFp64Auto && k1_uncertified(args, opt.fp64_tol))
        return reason::accuracy_uncertified;
    PreparedDgemm prepared;
    if (const char* why = prepare_dgemm(args, opt, &prepared)) return why;
    if (opt.fp64_products != kFp64Auto) return compute_dgemm(&prepared, opt.fp64_products);
    StructuralZeros<double> zeros(args);
    const StructuralTest structural{[&zeros](int i, int j) { return zeros.spans_apart(i, j); },
                                    [&zeros](int i, int j) { return zeros.terms_zero(i, j); }};
    return certify_and_compute(&prepared, args.m, args.n, args.k, 0, opt, structural,
                               [](const Fp64Certificate& c) { return c.failing; });
}

const char* run_zgemm(const GemmArgs<std::complex<double>>& args, const RunOptions& asked) {
    RunOptions opt = asked;
    if (takes_int8(opt)) {
        StructuralZeros<std::complex<double>> zeros(args);
        const char* why =
            emulate_zgemm_int8(args, opt, {[&zeros](int i, int jr) { return zeros.spans_apart(i, jr / 2); },
                                           [&zeros](int i, int jr) { return zeros.terms_zero(i, jr / 2); }});
        if (!bf16_after_int8(opt, why)) return why;
        opt.fp64_auto_depth = kFp64Slices;  // data INT8 refused need BF16's deepest slices
    }
    PreparedDgemm prepared;
    if (const char* why = prepare_zgemm(args, opt, &prepared)) return why;
    if (opt.fp64_products != kFp64Auto) return compute_dgemm(&prepared, opt.fp64_products);
    // The certificate runs on the real GEMM (m x 2K times 2K x 2N), entry by entry, that is
    // part by part of C; each part's bound is gamma_{K+1} of its real inner product, that of a
    // complex inner product of length K (docs/fp64-certificate.md, Section 9). A failing part
    // recomputes its whole complex entry; the log counts complex entries.
    // Column jr of the real GEMM holds parts of C's column jr / 2: a complex entry zero by
    // structure (each term has a complex factor 0) makes both its parts so, term by term.
    const int m = args.m;
    StructuralZeros<std::complex<double>> zeros(args);
    const StructuralTest structural{[&zeros](int i, int jr) { return zeros.spans_apart(i, jr / 2); },
                                    [&zeros](int i, int jr) { return zeros.terms_zero(i, jr / 2); }};
    return certify_and_compute(&prepared, m, 2 * args.n, 2 * args.k, args.k + 1, opt, structural,
                               [m](const Fp64Certificate& c) {
        std::vector<std::size_t> e;
        e.reserve(c.fail_at.size());
        for (std::size_t r : c.fail_at) e.push_back(r % std::size_t(m) + r / std::size_t(m) / 2 * std::size_t(m));
        std::sort(e.begin(), e.end());
        return long(std::unique(e.begin(), e.end()) - e.begin());
    });
}

// Auto: the sample first (sample_uncertified), then run() unless the sample forwards. The
// sample's time counts as the certificate's (PhaseTimes, zeroed first: the engines set only
// the phases they ran).
template <typename T, typename Run>
const char* sampled_first(const GemmArgs<T>& args, const RunOptions& opt, Run&& run) {
    if (opt.fp64_products != kFp64Auto) return run(opt);
    if (opt.times) *opt.times = PhaseTimes{};
    const double t0 = now_s();
    RunOptions sampled = opt;
    const bool refused = sample_uncertified(args, opt, &sampled);
    const double sample_s = now_s() - t0;
    const char* why = refused ? reason::accuracy_uncertified : run(sampled);
    if (opt.times) opt.times->certificate_s += sample_s;
    return why;
}

}  // namespace

const char* emulate_gemm(const GemmArgs<double>& args, const RunOptions& opt) {
    return sampled_first(args, opt, [&](const RunOptions& o) { return run_dgemm(args, o); });
}

const char* emulate_gemm(const GemmArgs<std::complex<float>>& args, const RunOptions& opt) {
    return emulate_cgemm(args, opt);
}

const char* emulate_gemm(const GemmArgs<std::complex<double>>& args, const RunOptions& opt) {
    return sampled_first(args, opt, [&](const RunOptions& o) { return run_zgemm(args, o); });
}

}  // namespace amxblas::kernels

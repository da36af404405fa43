// The BF16 engine's row of kernels/common/engines.def: what the routed pipeline calls
// (kernels/engine/fp64_engine.h) for DGEMM and ZGEMM. FP64 is prepare (exponents and the
// split's facts), then, with AMXBLAS_FP64_PRODUCTS=auto, the per-entry certificate on what the
// split found and on the lower bound of |A||B|, block by block (kernels/certificate/
// fp64_certificate.h: it picks the product count and the entries to recompute in FP64, or
// forwards with accuracy:uncertified), then compute (split and pack chunk by chunk, products,
// C). Fixed product counts need no check between the phases: the normalised slices keep every
// product and panel sum in range (kernels/isa/split.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kernels/bf16/bf16_screen.h"
#include "kernels/bf16/emulated_gemm.h"
#include "kernels/certificate/fp64_certificate.h"
#include "kernels/common/reasons.h"
#include "kernels/engine/fp64_engine.h"
#include "kernels/pack/operand_element.h"

namespace amxblas::kernels {
namespace {

// K = 1 under auto with tol <= 1: DGEMM's bound gamma_1 (|A||B|)_ij is one rounding, which the
// certificate's own accumulation term c1 = u (1 + 2 np u) > gamma_1 already exceeds for every
// entry whose row of op(A) and column of op(B) are both nonzero (docs/fp64-certificate.md,
// Section 7), while exact-zero rows and columns pass. So the certificate's verdict is known
// from the nonzero counts alone: more failing entries than fp64_repair_limit means it would
// forward after splitting, packing and one product; this says so first, at O(M + N). Only
// for finite data (anything else keeps the split's domain reason). DGEMM only (a ZGEMM's real
// GEMM is 2K deep).
bool k1_uncertified(const Fp64Gemm& g, double tol) {
    if (g.complex_parts || g.k != 1 || !(tol <= 1)) return false;
    long rows = 0, cols = 0;
    for (int i = 0; i < g.m; ++i) {
        const double a = element(g.a, i, 0);
        if (!std::isfinite(a)) return false;
        rows += a != 0;
    }
    for (int j = 0; j < g.n; ++j) {
        const double b = element(g.b, 0, j);
        if (!std::isfinite(b)) return false;
        cols += b != 0;
    }
    return rows * cols > fp64_repair_limit(g.m, g.n);
}

// The certificate's first pass on a call prepared under auto: the depth it picks and the
// entries failing there, in *cert (no fail_at). Where entries fail at the depth picked and the
// prepare split fewer than eight slices (RunOptions::fp64_auto_depth), it splits all eight
// (deepen_fp64_split) and decides again, which is the decision eight slices from the start give
// (docs/fp64-certificate.md, Section 6). The term-by-term test of structural zeros spends a
// budget as it is asked (fp64_structural_zeros.h): the second decision asks the same entries in
// the same order and is given the first decision's answers. nullptr once decided; else
// accuracy:uncertified where no depth applies (begin refuses), or the deeper split's reason.
const char* decide(PreparedDgemm* prepared, int k, int gamma_terms, const RunOptions& opt,
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

// Auto, after a successful prepare: the certificate picks the products and the entries to
// repair, or the call forwards (C untouched). The log counts C's entries recomputed: for a
// ZGEMM, complex entries (both parts of a failing part's entry are recomputed).
const char* certify_and_compute(PreparedDgemm* prepared, const Fp64Gemm& call, const RunOptions& opt) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    Fp64BlockCertificate block_cert;
    Fp64Certificate cert;
    if (const char* why = decide(prepared, call.k, call.gamma_terms, opt, call.structural, &block_cert, &cert))
        return why;
    const bool repairable = cert.failing <= fp64_repair_limit(call.m, call.n);
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
        opt.fp64_report->repaired =
            call.complex_parts ? long(complex_entries(cert.fail_at.data(), cert.fail_at.size(), call.m).size())
                               : cert.failing;
    }
    return nullptr;
}

// Data an engine before this one refused need BF16's deepest slices at once.
RunOptions own_options(const RunOptions& opt) {
    RunOptions o = opt;
    if (o.fp64_refused_before) o.fp64_auto_depth = kFp64Slices;
    return o;
}

const char* run(const Fp64Gemm& call, const RunOptions& asked) {
    const RunOptions opt = own_options(asked);
    if (opt.fp64_products == kFp64Auto && k1_uncertified(call, opt.fp64_tol)) return reason::accuracy_uncertified;
    PreparedDgemm prepared;
    if (const char* why = prepare_fp64(call, opt, &prepared)) return why;
    if (opt.fp64_products != kFp64Auto) return compute_dgemm(&prepared, opt.fp64_products);
    return certify_and_compute(&prepared, call, opt);
}

// BF16's splits scale each slice over the whole operand, so on the sample its verdict is an
// estimate of the call's. Where its certificate on the sample needed all eight slices, the
// call's own is likely to need them too and splits them at once (RunOptions::fp64_auto_depth;
// the same decision either way, docs/fp64-certificate.md, Section 6).
const char* decide_sample(const Fp64Gemm& sample, const RunOptions& one, long* failing, RunOptions* run) {
    const RunOptions opt = own_options(one);
    PreparedDgemm prepared;
    if (const char* why = prepare_fp64(sample, opt, &prepared)) return why;
    Fp64BlockCertificate block_cert;
    Fp64Certificate cert;
    const char* why = decide(&prepared, sample.k, sample.gamma_terms, opt, sample.structural, &block_cert, &cert);
    if (prepared.a.slices == kFp64Slices) run->fp64_auto_depth = kFp64Slices;
    *failing = why ? long(sample.m) * sample.n : cert.failing;  // no depth applies: every entry fails
    return nullptr;
}

bool auto_takes(const RunOptions&) { return true; }

std::size_t sample_bytes(int m, int n, int k, const RunOptions& opt) {
    return dgemm_auto_workspace_bytes(m, n, k, 1, opt.backend);
}

constexpr Fp64EngineOps kOps{auto_takes, run, decide_sample, bf16_screen, sample_bytes};

}  // namespace

const Fp64EngineOps& fp64_engine_bf16() { return kOps; }

}  // namespace amxblas::kernels

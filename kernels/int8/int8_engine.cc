// The INT8 engine's row of kernels/common/engines.def: what the routed pipeline calls
// (kernels/engine/fp64_engine.h). Its screen of a sample (the argument is
// docs/fp64-certificate.md, Section 12) is compiled without FMA contraction, as the rest of the
// screen (kernels/engine/scaled_sample.cc).
#include <algorithm>

#include "kernels/common/reasons.h"
#include "kernels/engine/fp64_engine.h"
#include "kernels/engine/guard.h"
#include "kernels/int8/int8_certificate.h"
#include "kernels/int8/int8_facts.h"
#include "kernels/int8/int8_gemm.h"
#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {
namespace {

// Auto tries INT8 where the backend has an INT8 product of its own (TDPBSSD, VPDPBUSD), and on
// the reference backend; a backend that would run it on the portable INT8 kernel (an AVX-512
// BF16 CPU without VNNI) leaves auto to the engines after it.
bool auto_takes(const RunOptions& opt) {
    const Int8Product own = kernels_for(opt).product_s8;
    return opt.backend == Backend::reference || (own && own != reference_product_s8);
}

// Where the sample's certificate passes every sampled entry, the counts the call's certificate
// tests first (RunOptions::int8_counts_from, int8_counts_to): a sampled entry is the call's
// entry, with the same facts and the same test, so the call fails somewhere below the sample's
// first clean count as the sample does.
const char* decide_sample(const Fp64Gemm& sample, const RunOptions& one, long* failing, RunOptions* run) {
    Int8Decision d;
    if (const char* why = int8_fp64_decide(sample, one, &d)) return why;
    *failing = d.failing;
    if (d.failing == 0 && d.first_clean > 0) {  // first_clean 0: tol gamma_n < u, never settled
        run->int8_counts_from = d.first_clean;
        run->int8_counts_to = std::min(d.count + 1, kInt8MaxModuli);
    }
    return nullptr;
}

// Its own test, on the facts it computes, in the same units (the same exponents), with U_ij in
// place of its lower bound L_ij <= (|A||B|)_ij (Int8BlockCertificate::fails_at_every_count).
long screen(ScaledSample& x, const RunOptions& opt, long enough) {
    Int8OperandFacts ia, ib;
    if (int8_operand_facts(x.va, true, 1, &ia) || int8_operand_facts(x.vb, false, 1, &ib) || ia.e != x.ea ||
        ib.e != x.fb)
        return -1;
    Int8BlockCertificate cert;
    const bool any_count = cert.begin(ia, ib, x.gamma_terms, opt.fp64_tol, kInt8MinModuli, {});
    const int m = x.m, n = x.n;
    if (any_count && enough >= 0) {
        // An entry that passes at some count with lhat = 0 passes whatever its lhat (the test
        // is monotone in lhat): on data whose rows and columns all become integers at the
        // largest count, the usual case, none can fail, and U is not needed.
        long could_fail = 0;  // counted until it passes `enough`
        for (int j = 0; j < n && could_fail <= enough; ++j)
            for (int i = 0; i < m && could_fail <= enough; ++i) could_fail += cert.fails_at_every_count(i, j, 0.0);
        if (could_fail <= enough) return 0;  // none shown: too few could be to act on
    }
    if (!x.scale(opt.workspace_cap_bytes)) return -1;
    if (!any_count) return long(m) * n;  // no count applies: the engine fails every entry
    long failing = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            const double u = x.upper[i + std::size_t(j) * m];
            failing += u != 0 && cert.fails_at_every_count(i, j, u);
        }
    return failing;
}

std::size_t sample_bytes(int m, int n, int k, const RunOptions&) {
    return int8_dgemm_workspace_bytes(m, n, k, 1, kInt8MinModuli);
}

constexpr Fp64EngineOps kOps{auto_takes, run_int8_fp64_gemm, decide_sample, screen, sample_bytes};

}  // namespace

const Fp64EngineOps& fp64_engine_int8() { return kOps; }

}  // namespace amxblas::kernels

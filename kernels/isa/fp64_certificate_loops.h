// The certificate's per-entry loops over the rows i of one column j (kernels/certificate/fp64_certificate.cc
// explains every term; docs/fp64-certificate.md proves them). One source
// (kernels/isa/fp64_certificate_loops.inc), built once per instruction set: plainly in
// kernels/isa/portable/fp64_certificate_portable.cc, with the AVX2 flags in
// kernels/isa/avx2/fp64_certificate_avx2.cc and with the AVX-512 flags in
// kernels/isa/avx512/fp64_certificate_avx512.cc, all with
// -ffp-contract=off and vectorised by the compiler. Each value is the proof's expression in the
// proof's order, rounded per IEEE operation whatever the vector width, and no reduction is
// reordered, so both builds decide every entry alike (tests/kernels/certificate/kernels_certificate_test.cc
// compares them). The functions have internal linkage: each build keeps its own copy, and
// nothing here calls a shared inline function a linker could pick from the other build.
#pragma once

#include <cstdint>

namespace amxblas::kernels {
namespace detail {

// The loops of one build, behind pointers (the caller picks a build at run time).
struct CertLoops {
    // rhs[i] = tol gamma_K Lo_ij rounded down, u00[i] = the (0, 0) term's upper bound; on a row
    // that is exactly zero (row_inf[i] = +inf, else +0) rhs[i] = +inf: that entry passes at every
    // depth and bounds no margin (C_ij = 0 exactly; the caller skips it).
    void (*halves)(int m, const double* lj, const double* a0, const double* row_inf, double s00, double l_up,
                   double delta_b, double sb, double tg, double* rhs, double* u00);
    // best[i] := d where entry i passes at depth d (called for d descending: the smallest wins).
    void (*pass_at)(int m, std::int64_t d, const double* rp, double cp, double c1, const double* u00,
                    const double* rhs, std::int64_t* best);
    // Of the column's best[]: the largest depth at which some entry first passes (at least
    // *deepest on entry) and how many pass at no depth (best = dmax + 1), added to *nowhere.
    void (*need)(int m, const std::int64_t* best, std::int64_t dmax, std::int64_t* deepest, std::int64_t* nowhere);
    // At depth d: how many entries fail (added to *failing) and the minimum over the passing
    // ones with lhs > 0 of rhs / lhs (min with *margin).
    void (*margin_at)(int m, const double* rp, double cp, double c1, const double* u00, const double* rhs,
                      std::int64_t* failing, double* margin);
};

// Each instruction set's build (kernels/isa/isa.h picks one per process).
const CertLoops& cert_loops_portable();
const CertLoops& cert_loops_avx2();
const CertLoops& cert_loops_avx512();

}  // namespace detail
}  // namespace amxblas::kernels

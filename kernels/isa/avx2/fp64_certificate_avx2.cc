// The certificate's column loops built with the AVX2 flags (sources.cmake): the same source as
// the portable build (kernels/isa/fp64_certificate_loops.h), four doubles a vector instead of
// two. Used only where isa_runs(Isa::avx2).
#include "kernels/isa/fp64_certificate_loops.h"

namespace amxblas::kernels::detail {

#include "kernels/isa/fp64_certificate_loops.inc"

const CertLoops& cert_loops_avx2() {
    static const CertLoops loops{cert_halves, cert_pass_at, cert_need, cert_margin_at};
    return loops;
}

}  // namespace amxblas::kernels::detail

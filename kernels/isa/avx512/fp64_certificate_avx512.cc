// The certificate's column loops built with the AVX-512 flags (sources.cmake): the same source
// as the portable build (kernels/isa/fp64_certificate_loops.h), eight doubles a vector instead
// of two. Used only where isa_runs(Isa::avx512).
#include "kernels/isa/fp64_certificate_loops.h"

namespace amxblas::kernels::detail {

#include "kernels/isa/fp64_certificate_loops.inc"

const CertLoops& cert_loops_avx512() {
    static const CertLoops loops{cert_halves, cert_pass_at, cert_need, cert_margin_at};
    return loops;
}

}  // namespace amxblas::kernels::detail

// The certificate's column loops, portable build: the same source as every instruction set's
// (kernels/isa/fp64_certificate_loops.h), two doubles a vector on plain x86-64.
#include "kernels/isa/fp64_certificate_loops.h"

namespace amxblas::kernels::detail {

#include "kernels/isa/fp64_certificate_loops.inc"

const CertLoops& cert_loops_portable() {
    static const CertLoops loops{cert_halves, cert_pass_at, cert_need, cert_margin_at};
    return loops;
}

}  // namespace amxblas::kernels::detail

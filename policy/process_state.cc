#include "policy/process_state.h"

#include "kernels/process_state.h"
#include "policy/domain_scan.h"
#include "policy/fp64_certificate_loops.h"

namespace amxblas {

void settle_policy_state() {
    kernels::settle_process_state();
    (void)scan_avx512_available();
    (void)detail::cert_loops();
}

}  // namespace amxblas

// A routed call's numeric-domain check, as the shim makes it between the decision and the
// kernels: the scalars, then the policy's rules (policy/domain.h) on what one scan of op(A) and
// op(B) found (kernels/scan/operand_scan.h). FP64 calls skip that scan: the kernels' split
// checks their one rule on the operands as it reads them (domain_needs_scan()). The benchmark
// makes the same check.
#pragma once

#include "kernels/common/gemm_types.h"
#include "kernels/scan/operand_scan.h"
#include "policy/domain.h"

namespace amxblas {

// nullptr when the call is in the domain, else the forward reason. threads: the routed call's
// own; a large operand's scan is shared among them (same result for every count).
template <typename T>
const char* check_domain(const kernels::GemmArgs<T>& args, int threads = 1) {
    if (const char* why = check_scalars(args.alpha, args.beta)) return why;
    if constexpr (!domain_needs_scan<T>()) return nullptr;
    return domain_rule<T>(kernels::scan_gemm_operands(args, threads), args.k);
}

}  // namespace amxblas

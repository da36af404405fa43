// The portable row of kernels/isa/isas.def: the definitions every other instruction set must
// match bit for bit, and what every x86-64 runs.
#include "kernels/isa/isa.h"

namespace amxblas::kernels {

const IsaKernels& isa_kernels_portable() {
    static const ScanRuns scan{detail::scan_run_fp32_portable, detail::scan_run_fp64_portable};
    static const IsaKernels k{&split_kernels_portable(), &reconstruct_kernels_portable(), &scan,
                              &detail::cert_loops_portable(),
                              &detail::int8_residue_loops_portable(), &detail::screen_loops_portable()};
    return k;
}

}  // namespace amxblas::kernels

// The avx2 row of kernels/isa/isas.def: this folder's builds of the loops written once for every
// instruction set, and the portable split, gathers, scan and reconstruction. Built without
// instruction-set flags: it only takes their addresses.
#include "kernels/isa/isa.h"

namespace amxblas::kernels {

const IsaKernels& isa_kernels_avx2() {
    static const ScanRuns scan{detail::scan_run_fp32_portable, detail::scan_run_fp64_portable};
    static const IsaKernels k{&split_kernels_portable(), &reconstruct_kernels_portable(), &scan,
                              &detail::cert_loops_avx2(),
                              &detail::int8_residue_loops_avx2()};
    return k;
}

}  // namespace amxblas::kernels

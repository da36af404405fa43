// The avx2 row of kernels/isa/isas.def: this folder's builds of the loops written once for every
// instruction set (the FP64 split among them), and the portable gathers, scan and
// reconstruction. Built without instruction-set flags: it only takes their addresses.
#include "kernels/isa/isa.h"

namespace amxblas::kernels {

const SplitKernels& split_kernels_avx2() {
    static const SplitKernels k = [] {
        SplitKernels t = split_kernels_portable();
        t.fp64 = fp64_split_avx2;
        return t;
    }();
    return k;
}

const IsaKernels& isa_kernels_avx2() {
    static const ScanRuns scan{detail::scan_run_fp32_portable, detail::scan_run_fp64_portable};
    static const IsaKernels k{&split_kernels_avx2(), &reconstruct_kernels_portable(), &scan,
                              &detail::cert_loops_avx2(),
                              &detail::int8_residue_loops_avx2(), &detail::screen_loops_avx2()};
    return k;
}

}  // namespace amxblas::kernels

// The avx512 row of kernels/isa/isas.def (AVX-512F/BW/DQ/VL): the tables of this folder's
// files. Built without instruction-set flags: it only takes their addresses.
#include "kernels/isa/isa.h"

namespace amxblas::kernels {

const IsaKernels& isa_kernels_avx512() {
    static const ScanRuns scan{detail::scan_run_fp32_avx512, detail::scan_run_fp64_avx512};
    static const IsaKernels k{&split_kernels_avx512(), &reconstruct_kernels_avx512(), &scan,
                              &detail::cert_loops_avx512(),
                              &detail::int8_residue_loops_avx512(), &detail::screen_loops_avx512()};
    return k;
}

}  // namespace amxblas::kernels

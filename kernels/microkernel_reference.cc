// The reference backend's micro-kernel table: the portable kernel of microkernel_reference.h
// at kAmxGeometry. Built with -ffp-contract=off (the header says why).
#include "kernels/microkernel_reference.h"

namespace amxblas::kernels {
namespace {

using Reference = reference_kernel::Kernel<kAmxGeometry.mr, kAmxGeometry.nr, kAmxGeometry.kstep, kAmxGeometry.nr_vnni>;

}  // namespace

void reference_fp32_chain(int ksteps, const Fp32Panels& p, float* c, int ldc) { Reference::fp32_chain(ksteps, p, c, ldc); }

void reference_product(int ksteps, const bf16_t* a, const bf16_t* b, float* c, int ldc) {
    Reference::product(ksteps, a, b, c, ldc);
}

MicroKernels reference_microkernels() { return Reference::table(); }

}  // namespace amxblas::kernels

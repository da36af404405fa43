// A micro-kernel set whose products do no arithmetic, for measuring the phases of a routed call
// that AMX would not remove (RunOptions::microkernels, the expert hook): the whole call runs as
// it does (facts, packing of every super-block, the certificate, the accumulator adds, the
// reconstruction) except the products. The reference products are scalar (minutes per call at
// N = 2048), so without this no phase could be measured at the model's sizes here.
#pragma once

#include "kernels/isa/microkernel.h"

namespace amxblas::bench {

// The reference set with product and product_s8 filling their tile with a constant: a typical
// magnitude sum on uniform data (INT8: digits of mean 63.5, so 4032 per term; BF16: 0.25 per
// term), so that the certificates see lower bounds of the right size; the certificate's test
// reads every count per entry whatever the values (int8_certificate.cc passes()), so its time
// does not depend on them. C is garbage after a call with it.
const kernels::MicroKernels& no_arith_kernels();

}  // namespace amxblas::bench

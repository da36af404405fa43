// The one dispatch table of the kernels' instruction sets (kernels/isa/isas.def): for each
// set, its tables of split and gathers, operand scan, reconstruction, certificate loops, INT8
// residue loops and the sample screen's loops;
// and the set this process uses, chosen once from the one CPU detector
// (kernels/runtime/cpu_features.h). The micro-kernels are chosen per backend (backend.h).
#pragma once

#include "kernels/isa/fp64_certificate_loops.h"
#include "kernels/isa/int8_residue_loops.h"
#include "kernels/isa/operand_scan_runs.h"
#include "kernels/isa/reconstruct.h"
#include "kernels/isa/screen_loops.h"
#include "kernels/isa/split.h"

namespace amxblas::kernels {

enum class Isa : int {
#define AMXBLAS_ISA(id, detector) id,
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
};

// One row's tables. Every instruction set computes the same bits as the portable one (the
// contracts' headers say so, and tests/kernels checks each against it).
struct IsaKernels {
    const SplitKernels* split;
    const ReconstructKernels* reconstruct;
    const ScanRuns* scan;
    const detail::CertLoops* certificate;
    const detail::Int8ResidueLoops* int8_residues;
    const detail::ScreenLoops* screen;
};

// Defined by each row's folder (kernels/isa/<id>/isa_<id>.cc).
#define AMXBLAS_ISA(id, detector) const IsaKernels& isa_kernels_##id();
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA

const char* isa_name(Isa isa);  // the row's id: "avx512", "portable"
bool isa_runs(Isa isa);         // its detector: can this CPU and OS run its code?
// The first row this CPU runs: the process's instruction set (asked once, cached).
Isa isa_here();
const IsaKernels& isa_kernels(Isa isa);
inline const IsaKernels& isa_kernels() { return isa_kernels(isa_here()); }

}  // namespace amxblas::kernels

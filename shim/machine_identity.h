// What a wisdom entry's measurements depend on, read from this machine and process (policy/
// wisdom.h, WisdomKey): the CPU, and which build of which library holds the real BLAS.
#pragma once

#include <string>

namespace amxblas {

// "GenuineIntel family 6 model 207 stepping 2: Intel(R) Xeon(R) Processor" (CPUID).
std::string cpu_description();
// The instruction sets the library's backends use that this CPU and OS run, in a fixed order:
// "avx2 avx512 avx512-bf16 avx512-vnni amx" (kernels/runtime/cpu_features.h's detectors).
std::string cpu_feature_list();

// The library file that holds `symbol` (a function of the real BLAS), by its real path, and
// which build it is: "build-id HEX" (its GNU build ID note, from the loaded object's program
// headers: no file is read), else "size BYTES mtime SECONDS" of the file; for OpenBLAS, then
// ", core NAME": the kernels it runs (openblas_get_corename). Empty strings when the address
// is in no loaded object.
struct LibraryIdentity {
    std::string path, build;
};
LibraryIdentity identify_library(const void* symbol);

}  // namespace amxblas

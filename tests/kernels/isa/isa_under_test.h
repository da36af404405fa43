// The instruction set a kernels test checks: the row of kernels/isa/isas.def that
// AMXBLAS_TEST_ISA names (default portable). CMake runs such a test once per row
// (tests/kernels/CMakeLists.txt); where this CPU cannot run the row the process exits 77,
// which CTest reports as skipped.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/isa/isa.h"

namespace amxblas::test {

inline kernels::Isa isa_under_test(const char* test) {
    using kernels::Isa;
    const char* name = std::getenv("AMXBLAS_TEST_ISA");
    if (name == nullptr) return Isa::portable;
#define AMXBLAS_ISA(id, detector)                                          \
    if (std::strcmp(name, #id) == 0) {                                     \
        if (!kernels::isa_runs(Isa::id)) {                                 \
            std::printf("%s: this CPU cannot run %s: skipped\n", test, #id); \
            std::exit(77);                                                 \
        }                                                                  \
        return Isa::id;                                                    \
    }
#include "kernels/isa/isas.def"
#undef AMXBLAS_ISA
    std::fprintf(stderr, "%s: AMXBLAS_TEST_ISA=%s is no row of kernels/isa/isas.def\n", test, name);
    std::exit(2);
}

}  // namespace amxblas::test

// Configure-time probe (tests/CMakeLists.txt, try_run): prints what the library's own detector,
// kernels/runtime/cpu_features.cc, says this CPU and OS run, so that the tests' choice of backend is
// the library's answer, not a grep of /proc/cpuinfo (which says nothing of XCR0). Compiled
// alone, before the library is built: the detector's source is included, not linked.
#include <cstdio>

#include "kernels/runtime/cpu_features.cc"

int main() {
    std::printf("avx512_bf16=%d\n", amxblas::kernels::cpu_has_avx512_bf16() ? 1 : 0);
    return 0;
}

// Prints the micro-kernel backends that run in this process, one name per line in the order of
// kernels/common/backends.def, as the library itself decides (shim/hardware.h: built into it, and
// this CPU and OS run it; amx also under the amxemu harness when that is preloaded).
// The tests' scripts ask this, not /proc/cpuinfo (tests/programs/lib.sh, test_backend).
#include <cstdio>

#include "kernels/bf16/emulated_gemm.h"
#include "shim/hardware.h"

int main() {
    using amxblas::kernels::Backend;
    const amxblas::Hardware& hw = amxblas::hardware();
    for (Backend b : amxblas::kernels::kAllBackends)
        if (hw.can_run(b) || (b == Backend::amx && hw.amx_emulator)) std::printf("%s\n", amxblas::kernels::backend_name(b));
    return 0;
}

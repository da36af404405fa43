#include "shim/hardware.h"

#include <sched.h>
#include <unistd.h>

namespace amxblas {

namespace {

// The cores this process may run on (its affinity mask, as set by taskset or mpirun).
int usable_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

const Hardware& hardware() {
    static const Hardware hw = [] {
        Hardware h;
        h.amx_cpu = kernels::backend_runnable_on_cpu(kernels::Backend::amx);
        h.amx_emulator = kernels::amx_emulator_present();
        h.avx512_bf16 = kernels::backend_runnable_on_cpu(kernels::Backend::avx512);
        h.cores = usable_cores();
        return h;
    }();
    return hw;
}

}  // namespace amxblas

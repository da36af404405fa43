#include "shim/hardware.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include "kernels/isa/backend.h"
#include "kernels/runtime/cpu_features.h"

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
        // A backend counts only when it was built into this library and this CPU runs it.
        for (kernels::Backend b : kernels::kAllBackends)
            h.set_runs(b, kernels::backend_built(b) && kernels::backend_runnable_on_cpu(b));
        h.amx_emulator = kernels::backend_built(kernels::Backend::amx) &&
                         kernels::amx_emulator_present();
        h.cores = usable_cores();
        return h;
    }();
    return hw;
}

}  // namespace amxblas

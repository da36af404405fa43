#include "shim/openmp.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <initializer_list>

namespace amxblas {

namespace {

using InParallelFn = int (*)();

std::atomic<InParallelFn> g_in_parallel{nullptr};
// dl_iterate_phdr's count of objects ever loaded when the runtime was last looked for:
// looked for again only after the program loaded something (numpy loads its BLAS, and with
// it libgomp, after start-up).
std::atomic<unsigned long long> g_adds_seen{~0ULL};

int read_adds(dl_phdr_info* info, size_t, void* out) {
    *static_cast<unsigned long long*>(out) = info->dlpi_adds;
    return 1;  // the first object carries the count
}

InParallelFn find_runtime() {
    // The global scope first: the runtime the program itself linked, whichever it is.
    if (void* f = dlsym(RTLD_DEFAULT, "omp_in_parallel")) return reinterpret_cast<InParallelFn>(f);
    // Then a runtime loaded privately (RTLD_LOCAL, e.g. with a BLAS that Python dlopen()ed);
    // RTLD_NOLOAD never loads one that is not there.
    for (const char* name : {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"}) {
        if (void* h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) {
            void* f = dlsym(h, "omp_in_parallel");
            dlclose(h);  // drops only the reference RTLD_NOLOAD took
            if (f) return reinterpret_cast<InParallelFn>(f);
        }
    }
    return nullptr;
}

}  // namespace

bool in_openmp_parallel_region() {
    InParallelFn f = g_in_parallel.load(std::memory_order_acquire);
    if (!f) {
        unsigned long long adds = 0;
        dl_iterate_phdr(read_adds, &adds);
        if (adds != g_adds_seen.load(std::memory_order_acquire)) {
            f = find_runtime();
            // The runtime before the count (release): a thread that sees this count also
            // sees the runtime found for it. A runtime once found is never cleared.
            if (f) g_in_parallel.store(f, std::memory_order_release);
            g_adds_seen.store(adds, std::memory_order_release);
        } else {
            // Another thread may have found it since this one looked.
            f = g_in_parallel.load(std::memory_order_acquire);
        }
        if (!f) return false;
    }
    return f() != 0;
}

}  // namespace amxblas

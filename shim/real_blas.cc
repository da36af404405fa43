#include "shim/real_blas.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "shim/config.h"
#include "shim/messages.h"

namespace amxblas {

namespace {

const char* const kRoutineNames[] = {
#define AMXBLAS_FORTRAN_GEMM(name, T, I) #name,
#define AMXBLAS_CBLAS_GEMM(name, T, I) #name,
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM
};
static_assert(sizeof(kRoutineNames) / sizeof(kRoutineNames[0]) == kRoutineCount);

[[noreturn]] void die(const std::string& message) {
    fatal_message(message.c_str());
    std::exit(EXIT_FAILURE);
}

// True when p lies inside libamxblas.so itself: we must never forward to ourselves.
bool is_our_own(void* p) {
    Dl_info ours{}, theirs{};
    if (!dladdr(reinterpret_cast<void*>(&is_our_own), &ours)) return false;
    if (!dladdr(p, &theirs)) return false;
    return ours.dli_fbase == theirs.dli_fbase;
}

// The library used when the program has no BLAS of its own, opened once.
struct Fallback {
    void* handle = nullptr;
    std::string description;  // what was tried, for the error message
};

const Fallback& fallback() {
    static const Fallback fb = [] {
        Fallback f;
        const std::string& named = settings().fallback;
        if (!named.empty()) {
            f.handle = dlopen(named.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!f.handle) {
                const char* err = dlerror();
                die("AMXBLAS_FALLBACK=" + named + " cannot be loaded: " +
                    (err ? err : "unknown error"));
            }
            f.description = "AMXBLAS_FALLBACK=" + named;
            return f;
        }
        for (const char* candidate : {"libopenblas.so.0", "libblas.so.3"}) {
            f.handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
            if (f.handle && !is_our_own(f.handle)) {
                f.description = candidate;
                return f;
            }
            f.handle = nullptr;
        }
        f.description = "libopenblas.so.0 and libblas.so.3 (neither could be loaded)";
        return f;
    }();
    return fb;
}

// A BLAS the process has already loaded outside the global scope: numpy, for one, opens its
// extension modules RTLD_LOCAL, so their libblas.so.3 is invisible to RTLD_NEXT. Using that
// copy, rather than loading a second OpenBLAS with a thread pool of its own, keeps us
// invisible.
void* find_in_loaded_objects(const char* name) {
    struct Search {
        const char* name;
        void* found;
    } search{name, nullptr};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* s = static_cast<Search*>(data);
            if (!info->dlpi_name || !*info->dlpi_name) return 0;  // the executable, vdso
            void* handle = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
            if (!handle) return 0;
            void* p = dlsym(handle, s->name);
            if (p && !is_our_own(p)) {
                s->found = p;  // the handle stays open: the symbol is in use from now on
                return 1;
            }
            dlclose(handle);
            return 0;
        },
        &search);
    return search.found;
}

void* resolve(Routine r) {
    const char* name = routine_name(r);
    void* p = dlsym(RTLD_NEXT, name);
    if (p && !is_our_own(p)) return p;
    if ((p = find_in_loaded_objects(name))) return p;
    const Fallback& fb = fallback();
    if (fb.handle) {
        p = dlsym(fb.handle, name);
        if (p && !is_our_own(p)) return p;
    }
    die(std::string("no BLAS library provides ") + name + "(): the program links none, and " +
        fb.description + " does not have it. Set AMXBLAS_FALLBACK to the path of a BLAS "
        "library, for example AMXBLAS_FALLBACK=/usr/lib/x86_64-linux-gnu/libopenblas.so.0");
}

}  // namespace

const char* routine_name(Routine r) { return kRoutineNames[static_cast<int>(r)]; }

void* real_symbol(Routine r) {
    static std::atomic<void*> slots[kRoutineCount];
    static std::once_flag once[kRoutineCount];
    const int i = static_cast<int>(r);
    void* p = slots[i].load(std::memory_order_acquire);
    if (p) return p;
    std::call_once(once[i], [&] { slots[i].store(resolve(r), std::memory_order_release); });
    return slots[i].load(std::memory_order_acquire);
}

}  // namespace amxblas

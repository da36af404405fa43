#include "shim/real_blas.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <cstring>
#include <string>
#include <type_traits>

#include "shim/config.h"
#include "shim/log.h"
#include "shim/messages.h"

namespace amxblas {

namespace {

const char* const kRoutineNames[] = {
#define AMXBLAS_FORTRAN_GEMM(name, T, Int) #name,
#define AMXBLAS_CBLAS_GEMM(name, T, Int) #name,
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM
};
static_assert(sizeof(kRoutineNames) / sizeof(kRoutineNames[0]) == kRoutineCount);

const bool kRoutineIs64[] = {
#define AMXBLAS_FORTRAN_GEMM(name, T, Int) std::is_same_v<Int, int64_t>,
#define AMXBLAS_CBLAS_GEMM(name, T, Int) std::is_same_v<Int, int64_t>,
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM
};

const bool kRoutineIsComplex[] = {
#define AMXBLAS_FORTRAN_GEMM(name, T, Int) is_complex_v<T>,
#define AMXBLAS_CBLAS_GEMM(name, T, Int) is_complex_v<T>,
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM
};

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

// The integer width of the library that holds the routine at p: its DDOT (Fortran, else
// CBLAS) is called with N whose low 32 bits are 2 and whose 64-bit value is negative.
// 32 or 64; 0 when the library has neither DDOT.
using FortranDdot = double(const int64_t* n, const double* x, const int64_t* incx,
                           const double* y, const int64_t* incy);
using CblasDdot = double(int64_t n, const double* x, int64_t incx, const double* y,
                         int64_t incy);

int library_index_bits(void* p) {
    Dl_info info{};
    if (!dladdr(p, &info) || !info.dli_fname) return 0;
    void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!handle) return 0;
    // Only the library's own DDOT says how it was built, not one of its dependencies'.
    auto own = [&](const char* sym) -> void* {
        void* q = dlsym(handle, sym);
        Dl_info qi{};
        return q && dladdr(q, &qi) && qi.dli_fbase == info.dli_fbase ? q : nullptr;
    };
    const int64_t n = static_cast<int64_t>(0xFFFFFFFF00000002ull), one = 1;
    const double x[2] = {1, 1}, y[2] = {1, 1};
    double dot = -1;
    if (void* f = own("ddot_")) dot = reinterpret_cast<FortranDdot*>(f)(&n, x, &one, y, &one);
    else if (void* g = own("cblas_ddot")) dot = reinterpret_cast<CblasDdot*>(g)(n, x, 1, y, 1);
    dlclose(handle);
    return dot == 2 ? 32 : dot == 0 ? 64 : 0;
}

// The integer width of a library by its handle: that of its own GEMM or DDOT (0: unknown).
int handle_index_bits(void* handle) {
    for (const char* sym : {"dgemm_", "sgemm_", "cblas_dgemm", "ddot_"})
        if (void* p = dlsym(handle, sym)) return library_index_bits(p);
    return 0;
}

// AMXBLAS_FALLBACK, opened once (nullptr when unset); an error if it cannot be loaded: no
// silent second choice.
struct NamedFallback {
    void* handle = nullptr;
    int bits = 0;
};

const NamedFallback& named_fallback() {
    static const NamedFallback nf = [] {
        NamedFallback f;
        const std::string& named = settings().fallback;
        if (named.empty()) return f;
        f.handle = dlopen(named.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!f.handle) {
            const char* err = dlerror();
            die("AMXBLAS_FALLBACK=" + named + " cannot be loaded: " + (err ? err : "unknown error"));
        }
        f.bits = handle_index_bits(f.handle);
        return f;
    }();
    return nf;
}

// The library for the plain (32-bit-integer) names when the program has no BLAS of its own,
// opened once. An ILP64 library can never serve them: it would read the caller's 32-bit
// integers as 64-bit ones and crash or compute garbage, and a program that links no BLAS
// cannot have been built for 64-bit plain names. So an ILP64 AMXBLAS_FALLBACK is refused here
// (one warning; it still serves the _64 names) and the default list is used, LP64 only.
// The refused ILP64 AMXBLAS_FALLBACK: loaded now, but never to be found for a plain name among
// the loaded objects either.
std::atomic<void*> g_refused_ilp64{nullptr};

struct Fallback {
    void* handle = nullptr;
    std::string description;  // what was tried, for the error message
    bool ilp64_refused = false;
};

const Fallback& fallback() {
    static const Fallback fb = [] {
        Fallback f;
        const std::string& named = settings().fallback;
        const NamedFallback& nf = named_fallback();
        if (nf.handle && nf.bits != 64) {
            f.handle = nf.handle;
            f.description = "AMXBLAS_FALLBACK=" + named;
            return f;
        }
        f.ilp64_refused = nf.handle != nullptr;
        g_refused_ilp64.store(nf.handle, std::memory_order_release);
        const std::string refused = "AMXBLAS_FALLBACK=" + named + " takes 64-bit integers (ILP64)";
        for (const char* candidate : {"libopenblas.so.0", "libblas.so.3"}) {
            f.handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
            if (f.handle && !is_our_own(f.handle) && handle_index_bits(f.handle) != 64) {
                f.description = candidate;
                if (f.ilp64_refused)
                    warning_message((std::string("warning: ") + refused +
                                     ": it serves only the _64 routines; the 32-bit-integer routines "
                                     "(dgemm_, cblas_dgemm, ...) go to " + candidate)
                                        .c_str());
                return f;
            }
            f.handle = nullptr;
        }
        f.description = (f.ilp64_refused ? refused + ", and " : std::string()) +
                        "libopenblas.so.0 and libblas.so.3 (neither could be loaded with 32-bit integers)";
        return f;
    }();
    return fb;
}

struct Resolved {
    void* fn;
    int bits;
};

// dgemm_64_ -> dgemm_, cblas_dgemm_64 -> cblas_dgemm.
std::string plain_name(const char* name) {
    std::string s(name);
    for (const char* suffix : {"_64_", "_64"}) {
        const std::size_t n = std::strlen(suffix);
        if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0)
            return s.substr(0, s.size() - n) + (suffix[3] == '_' ? "_" : "");
    }
    return s;
}

// A BLAS the process has already loaded outside the global scope: numpy, for one, opens its
// extension modules RTLD_LOCAL, so their libblas.so.3 is invisible to RTLD_NEXT. Using that
// copy, rather than loading a second OpenBLAS with a thread pool of its own, keeps us
// invisible. With ilp64_only, only a library whose integers are 64-bit counts.
void* find_in_loaded_objects(const char* name, bool ilp64_only = false) {
    struct Search {
        const char* name;
        bool ilp64_only;
        void* found;
    } search{name, ilp64_only, nullptr};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* s = static_cast<Search*>(data);
            if (!info->dlpi_name || !*info->dlpi_name) return 0;  // the executable, vdso
            void* handle = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
            if (!handle) return 0;
            if (!s->ilp64_only && handle == g_refused_ilp64.load(std::memory_order_acquire)) {
                dlclose(handle);
                return 0;
            }
            void* p = dlsym(handle, s->name);
            if (p && !is_our_own(p) && (!s->ilp64_only || library_index_bits(p) == 64)) {
                s->found = p;  // the handle stays open: the symbol is in use from now on
                return 1;
            }
            dlclose(handle);
            return 0;
        },
        &search);
    return search.found;
}

[[noreturn]] void die_unresolved(const char* name, const std::string& tried) {
    die(std::string("no BLAS library provides ") + name + "(): the program links none, and " +
        tried + " does not have it. Set AMXBLAS_FALLBACK to the path of a BLAS "
        "library, for example AMXBLAS_FALLBACK=/usr/lib/x86_64-linux-gnu/libopenblas.so.0");
}

Resolved resolve_ilp64(const char* name) {
    if (void* p = dlsym(RTLD_NEXT, name); p && !is_our_own(p)) return {p, 64};
    if (void* p = find_in_loaded_objects(name)) return {p, 64};
    const std::string plain = plain_name(name);
    if (void* p = find_in_loaded_objects(plain.c_str(), true)) return {p, 64};
    if (const NamedFallback& nf = named_fallback(); nf.handle && nf.bits == 64) {
        for (const std::string& sym : {std::string(name), plain})
            if (void* p = dlsym(nf.handle, sym.c_str()); p && !is_our_own(p)) return {p, 64};
    }
    for (const char* lib : {"libopenblas64.so.0", "libblas64.so.3"}) {
        void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        for (const std::string& sym : {std::string(name), plain}) {
            void* p = dlsym(h, sym.c_str());
            if (p && !is_our_own(p) && library_index_bits(p) == 64) return {p, 64};
        }
    }
    die_unresolved(name, "libopenblas64.so.0 and libblas64.so.3 (Debian's ILP64 BLAS)");
}

Resolved resolve(Routine r) {
    const char* name = routine_name(r);
    if (kRoutineIs64[static_cast<int>(r)]) return resolve_ilp64(name);
    void* p = dlsym(RTLD_NEXT, name);
    if (!p || is_our_own(p)) p = find_in_loaded_objects(name);
    // The fallback is opened only for a program without a BLAS of its own: one that has one
    // never loads a second library (and never holds the fallback's initialisation guard,
    // which a fork() from another thread could catch in progress, shim/after_fork.cc).
    if (!p) {
        const Fallback& fb = fallback();
        if (fb.handle) {
            p = dlsym(fb.handle, name);
            if (p && is_our_own(p)) p = nullptr;
        }
        if (!p && fb.ilp64_refused)
            die(std::string("no BLAS library with 32-bit integers provides ") + name + "(): the program links "
                "none, " + fb.description + ". Set AMXBLAS_FALLBACK to the path of an LP64 BLAS library, for "
                "example AMXBLAS_FALLBACK=/usr/lib/x86_64-linux-gnu/libopenblas.so.0");
        if (!p) die_unresolved(name, fb.description);
    }
    const int bits = library_index_bits(p) == 64 ? 64 : 32;
    if (bits == 64) {
        Dl_info info{};
        const char* lib = dladdr(p, &info) && info.dli_fname ? info.dli_fname : "?";
        const std::string note = std::string("abi routine=") + name + " library=" + lib +
                                 " integers=64: the real routine takes 64-bit integers (ILP64), "
                                 "so calls are read, routed and forwarded with 64-bit integers";
        log_note(note.c_str());
    }
    return {p, bits};
}

// Constant-initialised (once_flag has a constexpr constructor): no guard on the forwarding path.
std::once_flag g_once[kRoutineCount];

void ensure_resolved(int i) {
    if (detail::g_real_fn[i].load(std::memory_order_acquire)) return;
    std::call_once(g_once[i], [&] {
        const Resolved res = resolve(static_cast<Routine>(i));
        detail::g_real_bits[i].store(res.bits, std::memory_order_relaxed);
        detail::g_real_fn[i].store(res.fn, std::memory_order_release);
    });
}

}  // namespace

namespace detail {
std::atomic<void*> g_real_fn[kRoutineCount];
std::atomic<int> g_real_bits[kRoutineCount];
}  // namespace detail

const char* routine_name(Routine r) { return kRoutineNames[static_cast<int>(r)]; }

bool routine_is_complex(Routine r) { return kRoutineIsComplex[static_cast<int>(r)]; }

void* real_symbol(Routine r) {
    const int i = static_cast<int>(r);
    ensure_resolved(i);
    return detail::g_real_fn[i].load(std::memory_order_acquire);
}

int detail::resolve_index_bits(Routine r) {
    const int i = static_cast<int>(r);
    ensure_resolved(i);
    return g_real_bits[i].load(std::memory_order_relaxed);
}

}  // namespace amxblas

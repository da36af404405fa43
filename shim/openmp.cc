#include "shim/openmp.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace amxblas {

namespace {

using InParallelFn = int (*)();

std::atomic<InParallelFn> g_in_parallel{nullptr};
// Held around the library's questions to the dynamic loader, and by the thread that forks
// (openmp_lookup_before_fork): glibc 2.36 gives a forked child the loader's locks and data as
// another thread left them, so a child forked while a thread was inside dl_iterate_phdr hung
// on the loader's lock in its own first call, and one forked inside dlopen's name lookup
// crashed there (tests/shim/fork_first_call.c).
pthread_mutex_t g_lookup_lock = PTHREAD_MUTEX_INITIALIZER;

// dl_iterate_phdr's count of objects ever loaded when the runtime was last looked for:
// looked for again only after the program loaded something (numpy loads its BLAS, and with
// it libgomp, after start-up).
std::atomic<unsigned long long> g_adds_seen{~0ULL};

int read_adds(dl_phdr_info* info, size_t, void* out) {
    *static_cast<unsigned long long*>(out) = info->dlpi_adds;
    return 1;  // the first object carries the count
}

// The runtimes' file names, as the loader lists them ("/usr/lib/.../libgomp.so.1").
bool is_openmp_runtime(const char* path) {
    const char* base = std::strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char* name : {"libgomp.so", "libomp.so", "libiomp5.so"})
        if (std::strncmp(base, name, std::strlen(name)) == 0) return true;
    return false;
}

int collect_runtimes(dl_phdr_info* info, size_t, void* out) {
    const char* path = info->dlpi_name;
    if (path && std::strchr(path, '/') && is_openmp_runtime(path))
        static_cast<std::vector<std::string>*>(out)->emplace_back(path);
    return 0;
}

InParallelFn find_runtime() {
    // The global scope first: the runtime the program itself linked, whichever it is.
    if (void* f = dlsym(RTLD_DEFAULT, "omp_in_parallel")) return reinterpret_cast<InParallelFn>(f);
    // Then a runtime loaded privately (RTLD_LOCAL, e.g. with a BLAS that Python dlopen()ed),
    // opened by the full path the loader lists: a bare name would make dlopen read
    // /etc/ld.so.cache as well. RTLD_NOLOAD never loads anything, so no constructor runs (one
    // could call pthread_atfork, which waits for a fork in progress: a deadlock under the lock).
    std::vector<std::string> paths;
    dl_iterate_phdr(collect_runtimes, &paths);
    InParallelFn runtime = nullptr;
    for (const std::string& path : paths) {
        if (void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
            runtime = reinterpret_cast<InParallelFn>(dlsym(h, "omp_in_parallel"));
            dlclose(h);  // drops only the reference RTLD_NOLOAD took
            if (runtime) break;
        }
    }
    return runtime;
}

// Waits for another thread's lookup (microseconds), but not indefinitely: a thread inside
// dlopen (a library's constructor calling a GEMM) holds the loader's lock, which a lookup in
// progress may be waiting for; waiting here for that lookup would deadlock. After 2 ms the call
// is taken to be outside a parallel region, which may only cost it threads, and the next call
// looks again.
bool lock_lookup() {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (pthread_mutex_trylock(&g_lookup_lock) != 0) {
        if (std::chrono::steady_clock::now() > give_up) return false;
        sched_yield();
    }
    return true;
}

}  // namespace

bool in_openmp_parallel_region() {
    InParallelFn f = g_in_parallel.load(std::memory_order_acquire);
    if (!f) {
        if (!lock_lookup()) return false;
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
        pthread_mutex_unlock(&g_lookup_lock);
        if (!f) return false;
    }
    return f() != 0;
}

void openmp_lookup_before_fork() { pthread_mutex_lock(&g_lookup_lock); }

void openmp_lookup_after_fork() { pthread_mutex_unlock(&g_lookup_lock); }

}  // namespace amxblas

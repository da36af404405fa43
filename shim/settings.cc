// settings() and say_configuration_warnings() (shim/config.h): the one configuration of the
// process, and its warnings, said once per process tree.
//
// The settings are read the first time they are asked for: at the process's first BLAS call,
// or before its first fork (shim/after_fork.cc), whichever comes first, so that a forked child
// inherits them read. Their warnings (invalid values, shim/config_warnings.h) are kept and said
// at the first intercepted call, by whichever process of the tree forked from the reader makes
// it: a flag in a shared anonymous mapping, made when the settings are read, is inherited by
// every child fork makes and shared with it (an exec drops it). So a program that forks workers
// before its first call says them once, not once per worker; a shell, timeout or mpirun that
// merely forks and execs with the library preloaded says nothing, and the program it starts
// says them, once.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "kernels/common/fp_environment.h"
#include "shim/config.h"
#include "shim/config_warnings.h"
#include "shim/hardware.h"
#include "shim/messages.h"

namespace amxblas {

namespace {

std::vector<std::string> g_warnings;     // written once, before the settings are published
std::atomic<int>* g_said_in_tree = nullptr;  // shared with forked children; null if mmap failed
std::atomic<int> g_said_here{0};         // this process has said them, or knows they were said
std::atomic<int> g_said_fallback{0};     // without the shared mapping: once per process

}  // namespace

const Settings& settings() {
    static const Settings s = [] {
        // AMXBLAS_FP64_TOL's digits read the same under any rounding mode of the caller's.
        const kernels::LibraryFpEnvironment own_arithmetic;
        const Settings read = read_settings([](const char* name) -> const char* { return std::getenv(name); },
                                            hardware().cores, &g_warnings);
        for (std::string& w : configuration_warnings(environ, read, hardware())) g_warnings.push_back(std::move(w));
        if (!g_warnings.empty()) {
            void* page = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                              -1, 0);
            g_said_in_tree = page == MAP_FAILED ? &g_said_fallback : new (page) std::atomic<int>(0);
        }
        return read;
    }();
    return s;
}

void say_configuration_warnings() {
    if (g_said_here.load(std::memory_order_relaxed)) return;  // every call after the first
    (void)settings();
    if (g_warnings.empty() || g_said_in_tree->exchange(1) == 0)
        for (const std::string& w : g_warnings) warning_message(w.c_str());
    g_said_here.store(1, std::memory_order_relaxed);
}

}  // namespace amxblas

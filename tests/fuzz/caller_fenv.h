// gemm_fuzz --fenv: the caller's floating-point environment, drawn per case (docs/semantics.md,
// "The floating-point environment"). A case runs the library and OpenBLAS under the same
// environment: a rounding mode, FTZ and DAZ, traps (feenableexcept) and flags raised before the
// call. The checks (gemm_fuzz.cc): the call leaves the MXCSR's control bits as they were and
// the caller's flags raised; it adds no flag but inexact, the flags OpenBLAS raises on the same
// call, and overflow or invalid where its C holds an Inf or a NaN; under a directed rounding
// mode it is never routed; and it never traps where OpenBLAS does not (the traps of a case are
// those of the drawn set that OpenBLAS, run first with every exception masked, did not raise).
#pragma once

#include <dlfcn.h>
#include <fenv.h>
#include <setjmp.h>
#include <signal.h>
#include <xmmintrin.h>

#include <cstring>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gemm_fuzz {

constexpr unsigned kMxcsrFlags = 0x3F, kMxcsrInvalid = 0x01, kMxcsrOverflow = 0x08, kMxcsrInexact = 0x20;
// Denormal operand: x86 only, outside IEEE 754 and fenv.h (FE_ALL_EXCEPT), and raised or not by
// OpenBLAS itself from one run to the next (its edge kernels read different lanes).
constexpr unsigned kMxcsrDenormal = 0x02;
constexpr unsigned kMxcsrDaz = 0x40, kMxcsrFtz = 0x8000;

struct CallerFenv {
    int rounding = FE_TONEAREST;
    unsigned ftz_daz = 0;  // kMxcsrFtz, kMxcsrDaz
    int traps = 0;         // FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW, a subset
    int preset = 0;        // flags raised before the call

    bool directed() const { return rounding != FE_TONEAREST; }
    std::string describe() const {
        const char* r = rounding == FE_TONEAREST ? "nearest"
                        : rounding == FE_UPWARD  ? "upward"
                        : rounding == FE_DOWNWARD ? "downward"
                                                  : "towardzero";
        char buf[160];
        std::snprintf(buf, sizeof buf, "fenv: rounding=%s ftz=%d daz=%d traps=%#x preset-flags=%#x", r,
                      (ftz_daz & kMxcsrFtz) != 0, (ftz_daz & kMxcsrDaz) != 0, traps, preset);
        return buf;
    }
};

// A trap (SIGFPE) taken during a call: where (the object the faulting instruction is in) and
// which (si_code). OpenBLAS may trap where its own run before did not: its kernels compute on
// lanes past the matrices, whose contents vary from call to call. A trap in the library is a
// failure unless it is the one a result holding an Inf or a NaN asks for.
struct Trap {
    bool taken = false;
    int code = 0;
    char object[256] = {};
};
inline sigjmp_buf g_trap_return;
inline Trap g_trap;

inline void on_sigfpe(int, siginfo_t* info, void*) {
    g_trap.taken = true;
    g_trap.code = info->si_code;
    Dl_info d;
    const char* where = dladdr(info->si_addr, &d) && d.dli_fname ? d.dli_fname : "(unknown)";
    std::strncpy(g_trap.object, where, sizeof g_trap.object - 1);
    siglongjmp(g_trap_return, 1);
}

inline void catch_traps() {
    struct sigaction sa = {};
    sa.sa_sigaction = on_sigfpe;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGFPE, &sa, nullptr);
}

// Drawn from (seed, case) by a stream of its own, so that the case's arguments and matrices
// are the ones the same seed and case give without --fenv.
inline CallerFenv draw_fenv(uint64_t seed, long index) {
    uint64_t s = seed * 0x2545F4914F6CDD1Dull ^ (uint64_t(index) + 0x6a09e667f3bcc909ull);
    auto next = [&s] {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    CallerFenv e;
    const int modes[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    if (next() % 2) e.rounding = modes[next() % 3];
    if (next() % 4 == 0) e.ftz_daz |= kMxcsrFtz;
    if (next() % 4 == 0) e.ftz_daz |= kMxcsrDaz;
    const int all[] = {FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW};
    if (next() % 3 == 0)
        for (int f : all)
            if (next() % 2) e.traps |= f;
    if (next() % 5 == 0)
        for (int f : {FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW, FE_UNDERFLOW, FE_INEXACT})
            if (next() % 2) e.preset |= f;
    return e;
}

// Enters the environment with the given traps on; returns the MXCSR the call starts under.
inline unsigned enter(const CallerFenv& e, int traps) {
    fesetround(e.rounding);
    _mm_setcsr(_mm_getcsr() | e.ftz_daz);
    feclearexcept(FE_ALL_EXCEPT);
    if (traps) feenableexcept(traps);
    // The preset flags in the MXCSR only (on x86 the FE_ values are its flag bits): raised in the
    // x87 status word too, they would fire the x87 trap at its next instruction.
    _mm_setcsr(_mm_getcsr() | unsigned(e.preset));
    return _mm_getcsr();
}

// Back to the default environment; returns the MXCSR as the call left it.
inline unsigned leave() {
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr & ~kMxcsrFlags);
    fedisableexcept(FE_ALL_EXCEPT);
    fesetround(FE_TONEAREST);
    _mm_setcsr(_mm_getcsr() & ~(kMxcsrFtz | kMxcsrDaz));
    feclearexcept(FE_ALL_EXCEPT);
    return csr;
}

// The fenv exceptions of MXCSR flags (the three that may be trapped).
inline int trappable(unsigned flags) {
    return (flags & kMxcsrInvalid ? FE_INVALID : 0) | (flags & 0x04 ? FE_DIVBYZERO : 0) |
           (flags & kMxcsrOverflow ? FE_OVERFLOW : 0);
}

}  // namespace gemm_fuzz

// The floating-point environment the library computes under, and the caller's, which it gives
// back bit for bit (docs/semantics.md, "The floating-point environment").
//
// The library runs inside its caller's process, on the caller's thread, where the program may
// have set any SSE environment: a directed rounding mode (verified-computing codes do, on
// purpose), unmasked exceptions (Fortran's -ffpe-trap=invalid,zero,overflow, feenableexcept),
// FTZ and DAZ (Intel compilers at -O2, -ffast-math), flags it reads after the call (numpy).
// The library's own arithmetic needs the default environment: the FP64 engines' exactness and
// the certificates' error bounds assume IEEE round-to-nearest-even with gradual underflow, and
// none of its work may trap on an exception the caller unmasked. So every piece of the library's own arithmetic (the cost model, the
// domain checks, the kernels on every participating thread, the log) runs under mxcsr::kLibrary,
// in a LibraryFpEnvironment scope, which gives the caller's MXCSR back as it was, flags
// included. Only the real BLAS (a forwarded call) and C := BETA*C (route beta-scale, which the
// reference BLAS also computes under the caller's environment) run under the caller's.
//
// The library uses SSE/AVX arithmetic only (no x87), so the MXCSR is the whole environment.
// A save and two loads (STMXCSR, LDMXCSR, LDMXCSR) cost 17-19 ns more than none, in a loop with
// one dependent multiply (an Intel Xeon development machine): calls that forward before any
// arithmetic never load it.
#pragma once

#include <xmmintrin.h>

namespace amxblas::kernels {

namespace mxcsr {
// Sticky status flags: invalid, denormal operand, divide by zero, overflow, underflow, inexact.
inline constexpr unsigned kInvalid = 0x0001;
inline constexpr unsigned kOverflow = 0x0008;
inline constexpr unsigned kInexact = 0x0020;
inline constexpr unsigned kFlags = 0x003F;
inline constexpr unsigned kDenormalsAreZero = 0x0040;
inline constexpr unsigned kMasks = 0x1F80;     // one mask bit per flag: set = exception masked
inline constexpr unsigned kRounding = 0x6000;  // 00 nearest even, 01 down, 10 up, 11 toward zero
inline constexpr unsigned kFlushToZero = 0x8000;
// The library's environment: round to nearest even, every exception masked, no FTZ or DAZ, no
// flag raised (the power-on value of MXCSR).
inline constexpr unsigned kLibrary = kMasks;
}  // namespace mxcsr

inline unsigned read_mxcsr() { return _mm_getcsr(); }
inline void write_mxcsr(unsigned value) { _mm_setcsr(value); }

// True when the caller rounds to nearest even: the only rounding under which the emulation
// computes what it promises (anything else is forwarded: fenv:rounding).
inline bool rounds_to_nearest(unsigned caller_mxcsr) { return (caller_mxcsr & mxcsr::kRounding) == 0; }

// A scope of the library's own arithmetic on this thread: saves the caller's MXCSR, loads
// mxcsr::kLibrary (flags cleared), and loads the caller's back, bit for bit, when it ends. The
// thread pool runs each job under the MXCSR of the thread that posted it (flags cleared) and
// gathers the flags its workers raised into that thread's (kernels/runtime/thread_pool.h), so
// raised() covers the whole parallel computation.
class LibraryFpEnvironment {
public:
    LibraryFpEnvironment() : caller_(read_mxcsr()) { write_mxcsr(mxcsr::kLibrary); }
    ~LibraryFpEnvironment() { write_mxcsr(caller_); }
    LibraryFpEnvironment(const LibraryFpEnvironment&) = delete;
    LibraryFpEnvironment& operator=(const LibraryFpEnvironment&) = delete;

    unsigned caller() const { return caller_; }
    // The flags the library's arithmetic raised since the scope began.
    unsigned raised() const { return read_mxcsr() & mxcsr::kFlags; }

private:
    unsigned caller_;
};

}  // namespace amxblas::kernels

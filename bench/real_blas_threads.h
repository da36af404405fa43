// Waiting out the real BLAS's spinning threads before a route of the library is timed.
//
// After a call, OpenBLAS's worker threads keep spinning for 2^t TSC cycles before they sleep,
// t = 28 by default and OPENBLAS_THREAD_TIMEOUT if set (clamped to 4..30; OpenBLAS's
// driver/others/blas_server.c): 0.13 s at the development VM's 2.1 GHz TSC. A routed call
// timed inside that window shares the cores with them. On that VM (2 cores) the sweep's SGEMM
// took 20.1 instead of 11.4 ms at N = 768, and 6.0 instead of 3.3 ms at N = 512, in about a
// third of the runs; `perf record -e sched:sched_switch` showed the library's two threads
// time-sliced on one CPU while an OpenBLAS thread ran on the other. With
// OPENBLAS_THREAD_TIMEOUT=4, 8 runs of 8 gave 11.4-11.8 and 3.1-3.4 ms.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace amxblas::bench {

// Sleeps for as long as OpenBLAS's threads spin after a call, counted for a TSC of 1 GHz (no
// slower one is in use), plus 20 ms: 0.29 s by default.
inline void wait_for_real_blas_threads_to_sleep() {
    int t = 28;
    if (const char* e = std::getenv("OPENBLAS_THREAD_TIMEOUT"))
        if (const int v = std::atoi(e); v > 0) t = std::clamp(v, 4, 30);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::ldexp(1.0, t) / 1e9 + 0.02));
}

// Whether OpenBLAS's threads are asleep before the next call starts without waiting:
// OPENBLAS_THREAD_TIMEOUT at 8 or less (2^8 cycles). A benchmark then times a routed call right
// after the real BLAS's, on a core as busy as a program's: a 20 ms sleep before each call made
// both run 20-40% slower than calls back to back, as calibration makes them. Longer timeouts
// are waited out (wait_for_real_blas_threads_to_sleep).
inline bool real_blas_threads_never_spin() {
    const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
    return timeout && std::atoi(timeout) > 0 && std::atoi(timeout) <= 8;
}

}  // namespace amxblas::bench

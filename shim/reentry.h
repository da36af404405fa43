// A thread-local guard against re-entry. Some real BLAS libraries implement one exported
// routine by calling another (Debian's netlib cblas_dgemm calls dgemm_), and that inner call
// resolves back to our dgemm_. While the guard is held, our wrappers go straight to the real
// routine: the inner call is neither routed nor logged a second time.
#pragma once

namespace amxblas {

class ReentryGuard {
public:
    static bool held() { return depth_ > 0; }
    ReentryGuard() { ++depth_; }
    ~ReentryGuard() { --depth_; }
    ReentryGuard(const ReentryGuard&) = delete;
    ReentryGuard& operator=(const ReentryGuard&) = delete;

private:
    // initial-exec: a plain %fs-relative access, no __tls_get_addr on the forwarding path.
    static inline thread_local int depth_ __attribute__((tls_model("initial-exec"))) = 0;
};

}  // namespace amxblas

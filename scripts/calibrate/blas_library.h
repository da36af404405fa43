// The real BLAS a calibration measures: a library opened by name or path with dlopen (never the
// GEMMs this program resolves, which libamxblas.so would take over if it were preloaded), its
// four Fortran GEMMs, and the time of one call of each on operands this module owns.
#pragma once

#include <string>
#include <vector>

namespace amxblas::calibrate {

class BlasLibrary {
public:
    // Opens `name` (dlopen: a soname or a path) and finds sgemm_, dgemm_, cgemm_ and zgemm_ in it;
    // false with *why when it cannot be opened or lacks one. Kept open until the process ends.
    bool open(const std::string& name, std::string* why);
    // The routine's entry point (0 sgemm_, 1 dgemm_, 2 cgemm_, 3 zgemm_: policy/cost_model.h's
    // blas_routine_index), to identify the library that holds it.
    const void* symbol(int routine) const { return fn_[routine]; }
    // Threads for the library's own GEMMs where it has a way to set them (OpenBLAS's
    // openblas_set_num_threads; a BLAS without threads ignores it). False when it has none.
    bool set_threads(int threads);
    // Seconds of one call C := A B (N N, alpha 1, beta 0) of the routine, M x N x K, on this
    // object's operands (filled once with values in [-1, 1], grown as needed).
    double time_call(int routine, int m, int n, int k);
    // Seconds of one call of the routine on the caller's operands, as a program makes it
    // (transposes, scalars and leading dimensions; complex values as (re, im) pairs).
    double time_gemm(int routine, char transa, char transb, int m, int n, int k, const void* alpha, const void* a,
                     int lda, const void* b, int ldb, const void* beta, void* c, int ldc);

private:
    void* handle_ = nullptr;
    void* fn_[4] = {};
    void* set_threads_ = nullptr;
    std::vector<double> a_, b_, c_;      // DGEMM, ZGEMM
    std::vector<float> af_, bf_, cf_;    // SGEMM, CGEMM
};

}  // namespace amxblas::calibrate

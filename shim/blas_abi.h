// The C ABI of the routines we take over: gfortran's for the Fortran symbols (every argument
// by reference, then one hidden size_t length per CHARACTER argument), and CBLAS's.
#pragma once

#include <cstddef>

namespace amxblas {

template <typename T>
using FortranGemmFn = void(const char* transa, const char* transb, const int* m, const int* n,
                           const int* k, const T* alpha, const T* a, const int* lda, const T* b,
                           const int* ldb, const T* beta, T* c, const int* ldc,
                           std::size_t transa_len, std::size_t transb_len);

template <typename T>
using CblasGemmFn = void(int layout, int transa, int transb, int m, int n, int k, T alpha,
                         const T* a, int lda, const T* b, int ldb, T beta, T* c, int ldc);

// CBLAS enumerations (cblas.h), as plain ints at the ABI.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasColMajor = 102;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
constexpr int kCblasConjTrans = 113;

// Every routine of shim/routines.def, by name.
enum class Routine : int {
#define AMXBLAS_FORTRAN_GEMM(name, T, I) name,
#define AMXBLAS_CBLAS_GEMM(name, T, I) name,
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM
    count
};
constexpr int kRoutineCount = static_cast<int>(Routine::count);

const char* routine_name(Routine r);

}  // namespace amxblas

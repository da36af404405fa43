// The C ABI of the routines we take over: gfortran's for the Fortran symbols (every argument
// by reference, then one hidden size_t length per CHARACTER argument), and CBLAS's (complex
// ALPHA and BETA by pointer). Int is the index type of the routine's row in routines.def.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace amxblas {

// The scalar types of routines.def's second column.
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;
using std::int32_t;
using std::int64_t;

template <typename T>
struct is_complex : std::false_type {};
template <typename R>
struct is_complex<std::complex<R>> : std::true_type {};
template <typename T>
inline constexpr bool is_complex_v = is_complex<T>::value;

template <typename T, typename Int = int32_t>
using FortranGemmFn = void(const char* transa, const char* transb, const Int* m, const Int* n,
                           const Int* k, const T* alpha, const T* a, const Int* lda, const T* b,
                           const Int* ldb, const T* beta, T* c, const Int* ldc,
                           std::size_t transa_len, std::size_t transb_len);

// CBLAS passes real ALPHA and BETA by value, complex ones by pointer.
template <typename T>
using CblasScalar = std::conditional_t<is_complex_v<T>, const T*, T>;

template <typename T, typename Int = int32_t>
using CblasGemmFn = void(int layout, int transa, int transb, Int m, Int n, Int k,
                         CblasScalar<T> alpha, const T* a, Int lda, const T* b, Int ldb,
                         CblasScalar<T> beta, T* c, Int ldc);

// CBLAS enumerations (cblas.h), as plain ints at the ABI.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasColMajor = 102;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
constexpr int kCblasConjTrans = 113;

// Every routine of shim/routines.def, by name.
enum class Routine : int {
#define AMXBLAS_FORTRAN_GEMM(name, T, Int) name,
#define AMXBLAS_CBLAS_GEMM(name, T, Int) name,
#include "shim/routines.def"
#undef AMXBLAS_FORTRAN_GEMM
#undef AMXBLAS_CBLAS_GEMM
    count
};
constexpr int kRoutineCount = static_cast<int>(Routine::count);

const char* routine_name(Routine r);
bool routine_is_complex(Routine r);  // CGEMM, ZGEMM: 8mnk real flops, not 2mnk

}  // namespace amxblas

// The AVX-512 VNNI INT8 micro-kernel (VPDPBUSD): the product_s8 entry of the avx512 backend's
// table where the CPU has AVX512_VNNI (microkernel_avx512bf16.cc). Exists only when
// kernels/CMakeLists.txt built it (AMXBLAS_BUILT_AVX512_VNNI); runs only where
// cpu_has_avx512_vnni(). Declared here for that table and for its test
// (tests/kernels/isa/kernels_int8_microkernel_test.cc), which calls it directly.
#pragma once

#include <cstdint>

namespace amxblas::kernels {

// microkernel.h's Int8Product at kAmxInt8Geometry: c := A * B over `ksteps` packed blocks,
// exact INT32, overwritten (row stride ldc int32s); ksteps * 64 <= kInt8MaxPanelDepth.
void avx512_vnni_product_s8(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc);

}  // namespace amxblas::kernels

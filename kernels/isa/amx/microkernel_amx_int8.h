// The AMX-INT8 micro-kernel (microkernel_amx_int8.cc), for the amx backend's table in
// microkernel_amx.cc. Built only where the compiler knows -mamx-int8 (AMXBLAS_BUILT_AMX_INT8).
#pragma once

#include <cstdint>

namespace amxblas::kernels::amx {

// MicroKernels::product_s8 on kAmxInt8Geometry (microkernel.h): c := A * B over the panel,
// exact INT32. Needs the tiles configured by configure_tiles() (the table's thread_begin).
void product_s8(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc);

}  // namespace amxblas::kernels::amx

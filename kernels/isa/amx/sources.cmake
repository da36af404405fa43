# kernels/isa/amx: the AMX micro-kernels (the amx backend), where the compiler knows the
# instructions: AMX-BF16 (microkernel_amx.cc, the backend's table) and, where the compiler
# also knows AMX-INT8, the INT8 engine's product (microkernel_amx_int8.cc). Both run on the one
# tile configuration of amx_tiles.cc. Each file gets only the flags of the instructions it
# uses. Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
if(AMXBLAS_CXX_HAS_AMX)
  target_sources(amxblas_kernels PRIVATE ${here}/amx_tiles.cc ${here}/microkernel_amx.cc)
  set_source_files_properties(${here}/amx_tiles.cc PROPERTIES COMPILE_OPTIONS "${AMXBLAS_AMX_TILE_FLAGS}")
  set(amx_int8_built 0)
  if(AMXBLAS_CXX_HAS_AMX_INT8)
    target_sources(amxblas_kernels PRIVATE ${here}/microkernel_amx_int8.cc)
    set_source_files_properties(${here}/microkernel_amx_int8.cc PROPERTIES
      COMPILE_OPTIONS "${AMXBLAS_AMX_INT8_FLAGS}")
    set(amx_int8_built 1)
  endif()
  set_source_files_properties(${here}/microkernel_amx.cc PROPERTIES
    COMPILE_OPTIONS "${AMXBLAS_AMX_FLAGS}" COMPILE_DEFINITIONS AMXBLAS_BUILT_AMX_INT8=${amx_int8_built})
  set(AMXBLAS_BUILT_AMX 1)
endif()

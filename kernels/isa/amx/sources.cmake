# kernels/isa/amx: the AMX-BF16 micro-kernel (the amx backend), where the compiler knows the
# instructions, on the tile configuration of amx_tiles.cc (-mamx-tile only: it multiplies
# nothing). Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
if(AMXBLAS_CXX_HAS_AMX)
  target_sources(amxblas_kernels PRIVATE ${here}/amx_tiles.cc ${here}/microkernel_amx.cc)
  set_source_files_properties(${here}/amx_tiles.cc PROPERTIES COMPILE_OPTIONS "${AMXBLAS_AMX_TILE_FLAGS}")
  set_source_files_properties(${here}/microkernel_amx.cc PROPERTIES COMPILE_OPTIONS "${AMXBLAS_AMX_FLAGS}")
  set(AMXBLAS_BUILT_AMX 1)
endif()

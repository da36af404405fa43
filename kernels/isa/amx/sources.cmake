# kernels/isa/amx: the AMX-BF16 micro-kernel (the amx backend), where the compiler knows the
# instructions. Included by kernels/CMakeLists.txt.
if(AMXBLAS_CXX_HAS_AMX)
  target_sources(amxblas_kernels PRIVATE ${CMAKE_CURRENT_LIST_DIR}/microkernel_amx.cc)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/microkernel_amx.cc PROPERTIES
    COMPILE_OPTIONS "${AMXBLAS_AMX_FLAGS}")
  set(AMXBLAS_BUILT_AMX 1)
endif()

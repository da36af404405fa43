# kernels/isa/portable: the definitions every instruction set must match, and the reference
# micro-kernel. No instruction-set flags. Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
target_sources(amxblas_kernels PRIVATE
  ${here}/isa_portable.cc
  ${here}/split_portable.cc
  ${here}/pack_gather_portable.cc
  ${here}/operand_scan_portable.cc
  ${here}/reconstruct_portable.cc
  ${here}/fp64_certificate_portable.cc
  ${here}/int8_residues_portable.cc
  ${here}/screen_portable.cc
  ${here}/microkernel_reference.cc
)
# The split and the reconstruction do each IEEE operation as written: no FMA contraction. The
# split's FP64 loops are written to vectorize (split_portable.cc), with the flags that lets.
set_source_files_properties(${here}/reconstruct_portable.cc PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
set_source_files_properties(${here}/split_portable.cc PROPERTIES COMPILE_OPTIONS "${AMXBLAS_VECTOR_LOOP_FLAGS}")
set_source_files_properties(${here}/fp64_certificate_portable.cc
  PROPERTIES COMPILE_OPTIONS "${AMXBLAS_CERTIFICATE_FLAGS}")
set_source_files_properties(${here}/int8_residues_portable.cc ${here}/screen_portable.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_VECTOR_LOOP_FLAGS}")

# The reference micro-kernel: the oracle does each SDM step as written (no FMA contraction).
# -O3, which Release has anyway, also in the sanitizer step's RelWithDebInfo (-O2) and in Debug:
# GCC 12 at -O2 does not vectorize its gather of B's VNNI pairs (docs/testing.md). The
# reference backend is what the tests route to on a machine without AVX-512 BF16.
set_source_files_properties(${here}/microkernel_reference.cc PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-O3")
# Sanitizer builds: the reference kernel's arithmetic uninstrumented, its memory checked whole
# at each call with ASan's interface (microkernel_reference.cc says why).
if(AMXBLAS_SANITIZE)
  set_property(SOURCE ${here}/microkernel_reference.cc APPEND PROPERTY COMPILE_OPTIONS -fno-sanitize=all)
  if(AMXBLAS_SANITIZE MATCHES "address")
    set_property(SOURCE ${here}/microkernel_reference.cc APPEND PROPERTY COMPILE_DEFINITIONS
                 AMXBLAS_CHECK_KERNEL_MEMORY=1)
  endif()
endif()

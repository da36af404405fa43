# kernels/isa/avx512: AVX-512F/BW/DQ/VL (the split, gathers, scan, reconstruction and certificate
# loops, picked at run time by isa_runs(Isa::avx512)) and the AVX-512 BF16 micro-kernel (the
# avx512 backend, where the compiler knows the instructions). Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
target_sources(amxblas_kernels PRIVATE
  ${here}/isa_avx512.cc
  ${here}/split_avx512.cc
  ${here}/pack_gather_avx512.cc
  ${here}/operand_scan_avx512.cc
  ${here}/reconstruct_avx512.cc
  ${here}/fp64_certificate_avx512.cc
)
set_source_files_properties(${here}/split_avx512.cc ${here}/reconstruct_avx512.cc PROPERTIES
  COMPILE_OPTIONS "${AMXBLAS_AVX512_FLAGS};-ffp-contract=off;${AMXBLAS_GCC12_INTRIN_QUIET}")
set_source_files_properties(${here}/pack_gather_avx512.cc ${here}/operand_scan_avx512.cc PROPERTIES
  COMPILE_OPTIONS "${AMXBLAS_AVX512_FLAGS};${AMXBLAS_GCC12_INTRIN_QUIET}")
# The certificate's loops: the portable build's flags, 512-bit vectors.
set_source_files_properties(${here}/fp64_certificate_avx512.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_CERTIFICATE_FLAGS};${AMXBLAS_AVX512_FLAGS};-mprefer-vector-width=512")

if(AMXBLAS_CXX_HAS_AVX512BF16)
  target_sources(amxblas_kernels PRIVATE ${here}/microkernel_avx512bf16.cc)
  set_source_files_properties(${here}/microkernel_avx512bf16.cc PROPERTIES
    COMPILE_OPTIONS "${AMXBLAS_AVX512_BF16_FLAGS};${AMXBLAS_GCC12_INTRIN_QUIET}")
  set(AMXBLAS_BUILT_AVX512 1)
endif()

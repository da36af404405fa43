# kernels/isa/avx512: AVX-512F/BW/DQ/VL (the split, gathers, scan, reconstruction, certificate
# and sample screen loops, picked at run time by isa_runs(Isa::avx512)), the AVX-512 BF16 micro-kernel (the
# avx512 backend, where the compiler knows the instructions) and the AVX-512 VNNI INT8
# micro-kernel (that backend's product_s8, where the CPU has VNNI). Included by
# kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
target_sources(amxblas_kernels PRIVATE
  ${here}/isa_avx512.cc
  ${here}/split_avx512.cc
  ${here}/pack_gather_avx512.cc
  ${here}/operand_scan_avx512.cc
  ${here}/reconstruct_avx512.cc
  ${here}/fp64_certificate_avx512.cc
  ${here}/int8_residues_avx512.cc
  ${here}/screen_avx512.cc
)
set_source_files_properties(${here}/split_avx512.cc ${here}/reconstruct_avx512.cc PROPERTIES
  COMPILE_OPTIONS "${AMXBLAS_AVX512_FLAGS};-ffp-contract=off;${AMXBLAS_GCC12_INTRIN_QUIET}")
set_source_files_properties(${here}/pack_gather_avx512.cc ${here}/operand_scan_avx512.cc PROPERTIES
  COMPILE_OPTIONS "${AMXBLAS_AVX512_FLAGS};${AMXBLAS_GCC12_INTRIN_QUIET}")
# The INT8 residue loops (with the gather of whole blocks in intrinsics) and the certificate's
# loops: the portable build's flags, 512-bit vectors.
set_source_files_properties(${here}/int8_residues_avx512.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_VECTOR_LOOP_FLAGS};${AMXBLAS_AVX512_FLAGS};-mprefer-vector-width=512;${AMXBLAS_GCC12_INTRIN_QUIET}")
set_source_files_properties(${here}/screen_avx512.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_VECTOR_LOOP_FLAGS};${AMXBLAS_AVX512_FLAGS};-mprefer-vector-width=512")
set_source_files_properties(${here}/fp64_certificate_avx512.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_CERTIFICATE_FLAGS};${AMXBLAS_AVX512_FLAGS};-mprefer-vector-width=512")

if(AMXBLAS_CXX_HAS_AVX512BF16)
  target_sources(amxblas_kernels PRIVATE ${here}/microkernel_avx512bf16.cc)
  set_source_files_properties(${here}/microkernel_avx512bf16.cc PROPERTIES
    COMPILE_OPTIONS "${AMXBLAS_AVX512_BF16_FLAGS};${AMXBLAS_GCC12_INTRIN_QUIET}")
  set(AMXBLAS_BUILT_AVX512 1)
endif()

# The INT8 kernel's own flags: VNNI on this file alone, so nothing else can pick up VPDPBUSD.
# The avx512 table (microkernel_avx512bf16.cc) names it only when AMXBLAS_BUILT_AVX512_VNNI
# and calls it only where cpu_has_avx512_vnni(); tests/kernels reads AMXBLAS_CXX_HAS_AVX512VNNI.
# The INT8 residues from the values' bytes (int8_residues_vnni.cc) likewise: the avx512 residue
# loops call it only where AMXBLAS_BUILT_AVX512_VNNI and cpu_has_avx512_vnni().
if(AMXBLAS_CXX_HAS_AVX512VNNI)
  target_sources(amxblas_kernels PRIVATE ${here}/microkernel_avx512_int8.cc ${here}/int8_residues_vnni.cc)
  set_source_files_properties(${here}/microkernel_avx512_int8.cc PROPERTIES
    COMPILE_OPTIONS "${AMXBLAS_AVX512_VNNI_FLAGS};${AMXBLAS_GCC12_INTRIN_QUIET}")
  # DQ too (VCVTPD2QQ): the avx512 row of kernels/isa/isas.def requires it.
  set_source_files_properties(${here}/int8_residues_vnni.cc PROPERTIES
    COMPILE_OPTIONS "${AMXBLAS_AVX512_VNNI_FLAGS};-mavx512dq;${AMXBLAS_GCC12_INTRIN_QUIET}")
  set(AMXBLAS_BUILT_AVX512_VNNI 1)
endif()

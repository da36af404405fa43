# kernels/isa/avx2: AVX2 (the row of kernels/isa/isas.def between avx512 and portable, picked
# at run time by isa_runs(Isa::avx2)): the loops written once for every instruction set, the
# INT8 engine's residues, folds, CRT reconstruction and certificate row test, the FP64
# certificate's column loops, the sample screen's loops and the FP64 split, built four doubles a
# vector. The other splits, the gathers, the scan and the BF16 engine's reconstruction are the
# portable ones.
# Every AMX and AVX-512 CPU runs AVX2 too; the row is what a CPU without AVX-512 (the AMD Zen 2
# and Zen 3 of the development machines) runs instead of the two-double portable build.
# Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
target_sources(amxblas_kernels PRIVATE
  ${here}/isa_avx2.cc
  ${here}/fp64_certificate_avx2.cc
  ${here}/int8_residues_avx2.cc
  ${here}/split_avx2.cc
  ${here}/screen_avx2.cc
)
set_source_files_properties(${here}/int8_residues_avx2.cc ${here}/split_avx2.cc ${here}/screen_avx2.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_VECTOR_LOOP_FLAGS};${AMXBLAS_AVX2_FLAGS}")
set_source_files_properties(${here}/fp64_certificate_avx2.cc PROPERTIES COMPILE_OPTIONS
  "${AMXBLAS_CERTIFICATE_FLAGS};${AMXBLAS_AVX2_FLAGS}")

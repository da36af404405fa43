# kernels/bf16: the BF16 component-product engine (the row bf16 of kernels/common/engines.def):
# the blocked driver and its macro-kernel for FP32 (SGEMM, CGEMM) and FP64 (DGEMM, ZGEMM), the
# FP64 auto certificate's use of it, and its screen. Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
target_sources(amxblas_kernels PRIVATE
  ${here}/bf16_engine.cc
  ${here}/bf16_screen.cc
  ${here}/complex_gemm.cc
  ${here}/fp32_gemm.cc
  ${here}/fp64_facts.cc
  ${here}/fp64_gemm.cc
  ${here}/real_gemm.cc
  ${here}/workspace_layout.cc
)
# The screen's rounding allowances count one rounding per operation (kernels/CMakeLists.txt).
set_source_files_properties(${here}/bf16_screen.cc PROPERTIES COMPILE_OPTIONS "${AMXBLAS_VECTOR_LOOP_FLAGS}")

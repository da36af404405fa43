# kernels/int8: the INT8 FP64 engine, Ozaki scheme II (the row int8 of
# kernels/common/engines.def; docs/fp64-int8.md). Its loops of IEEE operations are built with
# kernels/CMakeLists.txt's vector-loop flags, its per-block loops per instruction set
# (kernels/isa/int8_residue_loops.h). Included by kernels/CMakeLists.txt.
set(here ${CMAKE_CURRENT_LIST_DIR})
target_sources(amxblas_kernels PRIVATE
  ${here}/crt_basis.cc
  ${here}/crt_reconstruct.cc
  ${here}/int8_certificate.cc
  ${here}/int8_engine.cc
  ${here}/int8_facts.cc
  ${here}/int8_gemm.cc
  ${here}/int8_pack.cc
  ${here}/int8_refine.cc
)
set_source_files_properties(${here}/crt_reconstruct.cc ${here}/int8_certificate.cc ${here}/int8_engine.cc
  ${here}/int8_facts.cc ${here}/int8_refine.cc PROPERTIES COMPILE_OPTIONS "${AMXBLAS_VECTOR_LOOP_FLAGS}")

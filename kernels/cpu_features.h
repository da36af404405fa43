// What this CPU and OS can run, asked once per process and cached (thread-safe static init).
#pragma once

namespace amxblas::kernels {

// The reference backend: portable C++, every CPU runs it.
inline bool cpu_runs_portable_code() { return true; }
// AVX512F + BW + DQ + VL, with the OS saving opmask and ZMM state (XCR0): the split/pack path.
bool cpu_has_avx512_split();
// The above plus AVX512_BF16 (VDPBF16PS): the avx512 micro-kernel.
bool cpu_has_avx512_bf16();
// AMX-TILE + AMX-BF16, palette 1, and the kernel granted this process XTILEDATA.
bool cpu_has_amx_bf16();

}  // namespace amxblas::kernels

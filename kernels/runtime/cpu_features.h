// What this CPU and OS can run, asked once per process and cached (thread-safe static init).
#pragma once

namespace amxblas::kernels {

// The reference backend: portable C++, every CPU runs it.
inline bool cpu_runs_portable_code() { return true; }
// AVX + AVX2, with the OS saving YMM state (XCR0): the avx2 row of kernels/isa/isas.def.
bool cpu_has_avx2();
// AVX512F + BW + DQ + VL, with the OS saving opmask and ZMM state (XCR0): the split/pack path.
bool cpu_has_avx512_split();
// The above plus AVX512_BF16 (VDPBF16PS): the avx512 micro-kernel.
bool cpu_has_avx512_bf16();
// AVX512F + BW + VL + AVX512_VNNI (VPDPBUSD), with the OS saving opmask and ZMM state: the
// avx512 backend's INT8 micro-kernel. Asked on its own: VNNI is a CPUID bit apart from BF16
// (every CPU with AVX512_BF16 known so far has it, but none is promised).
bool cpu_has_avx512_vnni();
// AMX-TILE + AMX-BF16 + AMX-INT8, palette 1, and the kernel granted this process XTILEDATA.
bool cpu_has_amx_bf16();
// True when the trap-and-emulate AMX harness (amxemu/) is loaded in this process: it
// exports `extern "C" int amxemu_harness_version(void)`. Not cached: a test may dlopen the
// harness after the first call. The kernels never ask it themselves; callers pass the answer
// in RunOptions::amx_emulator.
bool amx_emulator_present();

}  // namespace amxblas::kernels

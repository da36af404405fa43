// amxemu: a trap-and-emulate harness for the AMX-TILE / AMX-BF16 / AMX-INT8 instructions.
//
// Loaded into a process (LD_PRELOAD=libamxemu.so, or linked as the shared library target
// `amxemu`), it installs a SIGILL handler in a constructor. When an AMX instruction faults
// (no AMX on the machine, or no ARCH_REQ_XCOMP_PERM), the handler decodes it from the bytes at
// RIP, performs it on the faulting thread's emulated tile state, advances RIP past it and
// returns: the very binary code the compiler produced runs, and every tile is checked.
//
// Emulated: LDTILECFG, STTILECFG, TILERELEASE, TILEZERO, TILELOADD, TILELOADDT1, TILESTORED,
// TDPBF16PS, and the INT8 dot products TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD (INT32 sums that
// wrap, no saturation), with the semantics and #UD/#GP checks of the Intel SDM (see
// README.md). A check the hardware would fault on aborts the process with a message naming the
// instruction, its tiles and their shapes. Any other SIGILL goes to the handler the program
// installed (or SIG_DFL).
//
// Detection: the library under test looks up `amxemu_harness_version` with
// dlsym(RTLD_DEFAULT, ...) and, when found, skips arch_prctl(ARCH_REQ_XCOMP_PERM).
//
// Statistics: AMXEMU_STATS=1 prints one line per instruction kind to stderr at exit.
#pragma once

#include <stdint.h>

#define AMXEMU_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// Trapped instructions, counted per kind since load or the last amxemu_reset_counters()
// (all threads together; relaxed atomics). Fields are only ever appended, so that code built
// against an older layout reads the same counters at the same offsets.
struct amxemu_counts {
    uint64_t ldtilecfg;
    uint64_t sttilecfg;
    uint64_t tilerelease;
    uint64_t tilezero;
    uint64_t tileloadd;
    uint64_t tileloaddt1;
    uint64_t tilestored;
    uint64_t tdpbf16ps;
    uint64_t passed_on;  // SIGILLs that were not AMX and went to the program's own disposition
    uint64_t tdpbssd;    // AMX-INT8: signed x signed bytes
    uint64_t tdpbsud;    //           signed src1 x unsigned src2
    uint64_t tdpbusd;    //           unsigned src1 x signed src2
    uint64_t tdpbuud;    //           unsigned x unsigned
    uint64_t traps;      // SIGILLs that ran AMX instructions: one runs those that directly follow too
};

// 1 for this version of the harness. Its presence is what the library under test checks.
AMXEMU_API int amxemu_harness_version(void);
AMXEMU_API void amxemu_counters(struct amxemu_counts* out);
AMXEMU_API void amxemu_reset_counters(void);
// For tests: a copy of the calling thread's emulated tile `tile` (0-7), all 16 rows x 64 bytes,
// including the bytes outside the configured shape (which the hardware keeps zero).
AMXEMU_API void amxemu_tile_bytes(int tile, void* out_1024_bytes);
// For tests: which arithmetic TDPBF16PS runs, the scalar definition (0) or its AVX2 and FMA
// equal (1, the default where the CPU has them; amxemu_bf16.h). Returns the path in use after
// the call: 0 when asked for 1 on a CPU without them. For all threads; call it between
// instructions.
AMXEMU_API int amxemu_use_vector_arithmetic(int on);

#ifdef __cplusplus
}
#endif

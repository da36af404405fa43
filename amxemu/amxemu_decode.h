// Decoding the AMX instructions the harness emulates (AMX-TILE, AMX-BF16, AMX-INT8: their
// VEX encodings in the SDM, Vol. 2) from the bytes at a trapped RIP and the registers of its
// context. Async-signal-safe.
#pragma once

#include <ucontext.h>

#include <cstdint>

namespace amxemu {

// The emulated instructions. Each value is the index of its counter in struct amxemu_counts
// (amxemu.h; amxemu.cc checks them); 8 is passed_on, a signal the harness did not take.
enum class Op : int {
    ldtilecfg = 0,
    sttilecfg = 1,
    tilerelease = 2,
    tilezero = 3,
    tileloadd = 4,
    tileloaddt1 = 5,
    tilestored = 6,
    tdpbf16ps = 7,
    tdpbssd = 9,
    tdpbsud = 10,
    tdpbusd = 11,
    tdpbuud = 12,
};

// The tile matrix multiplies: three tile operands (ModRM.reg, ModRM.r/m, VEX.vvvv).
inline bool is_tmul(Op op) {
    return op == Op::tdpbf16ps || op == Op::tdpbssd || op == Op::tdpbsud || op == Op::tdpbusd || op == Op::tdpbuud;
}

struct Insn {
    Op op;
    uint64_t rip;
    int length;
    int tile_reg;   // ModRM.reg (with VEX.R): tmm operand of all but LDTILECFG/STTILECFG
    int tile_rm;    // ModRM.r/m (with VEX.B): src1 of a TMUL op (TDPBF16PS, TDPB[SU][SU]D)
    int tile_vvvv;  // VEX.vvvv: src2 of a TMUL op
    uint64_t addr;  // effective address of the memory operand
    uint64_t stride;  // TILELOADD/TILESTORED: index << scale, 0 without an index register
};

// The instruction's mnemonic ("TDPBF16PS").
const char* insn_name(Op op);

// Decodes the instruction at the context's RIP into *out. Returns false when it is not one of
// the emulated AMX instructions (the SIGILL is then the program's). An encoding of an emulated
// opcode that the hardware rejects with #UD aborts with a message, unless `lookahead` (the
// handler reading ahead of the trapping instruction, amxemu.cc): then false, and the
// instruction traps and aborts by itself.
bool decode(const ucontext_t* uc, Insn* out, bool lookahead);

// Whether the 15 bytes at `rip` (the longest instruction) lie in the page of the byte before
// it, the last of the instruction the CPU just decoded, and so can be read without a fault.
inline bool fetchable_after(uint64_t rip) { return ((rip - 1) >> 12) == ((rip + 14) >> 12); }

}  // namespace amxemu

// The decoder of amxemu_decode.h: legacy prefixes, the three-byte VEX form, ModRM, SIB and the
// displacement, and the #UD rules of each emulated opcode's encoding.
#include "amxemu/amxemu_decode.h"

#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "amxemu/amxemu_message.h"

namespace amxemu {
namespace {

// Indexed by Op; 8 (passed_on) is no instruction.
constexpr const char* kInsnNames[13] = {"LDTILECFG", "STTILECFG", "TILERELEASE", "TILEZERO", "TILELOADD",
                                        "TILELOADDT1", "TILESTORED", "TDPBF16PS", nullptr, "TDPBSSD",
                                        "TDPBSUD", "TDPBUSD", "TDPBUUD"};

// x86 register number (ModRM/SIB encoding, extended by VEX) -> index in gregs.
constexpr int kGregOf[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                             REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                             REG_R12, REG_R13, REG_R14, REG_R15};

uint64_t greg(const ucontext_t* uc, int reg) {
    return uint64_t(uc->uc_mcontext.gregs[kGregOf[reg]]);
}

uint64_t segment_base(int seg) {
    unsigned long base = 0;
    syscall(SYS_arch_prctl, seg == 0x64 ? ARCH_GET_FS : ARCH_GET_GS, &base);
    return base;
}

[[noreturn]] void encoding_ud(uint64_t rip, const char* what, const char* why) {
    Msg().s("amxemu: #UD: ").s(what).s(" at ").x(rip).s(": ").s(why).die();
}

int32_t read_disp32(const uint8_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// An encoding of an emulated opcode that the hardware rejects with #UD: aborts, or when only
// looking ahead (see on_sigill) declines it, so that the instruction traps and aborts by itself.
bool reject(bool lookahead, uint64_t rip, const char* what, const char* why) {
    if (!lookahead) encoding_ud(rip, what, why);
    return false;
}

}  // namespace

const char* insn_name(Op op) { return kInsnNames[int(op)]; }

bool decode(const ucontext_t* uc, Insn* out, bool lookahead) {
    const uint64_t rip = uint64_t(uc->uc_mcontext.gregs[REG_RIP]);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(rip);
    int i = 0;
    bool addr32 = false;
    int seg = 0;
    // Legacy prefixes allowed before VEX: address size and segment overrides. 66, F2, F3,
    // F0 and REX before VEX are #UD on the hardware too, and are left to the next handler.
    for (; i < 4; ++i) {
        const uint8_t b = p[i];
        if (b == 0x67) {
            addr32 = true;
        } else if (b == 0x64 || b == 0x65) {
            seg = b;
        } else if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e) {
            // ES/CS/SS/DS overrides have no effect in 64-bit mode.
        } else {
            break;
        }
    }
    // All AMX instructions live in VEX map 0F38, which only the three-byte C4 form can
    // encode (C5 implies map 0F), so C5 never starts one.
    if (p[i] != 0xc4) return false;
    const uint8_t v1 = p[i + 1];
    // The map first: another instruction may end before the bytes an AMX one would have.
    if ((v1 & 0x1f) != 0x02) return false;
    const uint8_t v2 = p[i + 2];
    const uint8_t opcode = p[i + 3];
    const uint8_t modrm = p[i + 4];
    const int vex_r = (v1 & 0x80) ? 0 : 8;
    const int vex_x = (v1 & 0x40) ? 0 : 8;
    const int vex_b = (v1 & 0x20) ? 0 : 8;
    const int vex_w = v2 >> 7;
    const int vvvv = (~v2 >> 3) & 0xf;
    const int vex_l = (v2 >> 2) & 1;
    const int pp = v2 & 3;  // 0: NP, 1: 66, 2: F3, 3: F2
    const int mod = modrm >> 6;
    const int reg = (modrm >> 3) & 7;
    const int rm = modrm & 7;

    Op op;
    if (opcode == 0x49 && pp == 0) {
        op = mod == 3 ? Op::tilerelease : Op::ldtilecfg;
    } else if (opcode == 0x49 && pp == 1) {
        op = Op::sttilecfg;
    } else if (opcode == 0x49 && pp == 3) {
        op = Op::tilezero;
    } else if (opcode == 0x4b && pp == 3) {
        op = Op::tileloadd;
    } else if (opcode == 0x4b && pp == 1) {
        op = Op::tileloaddt1;
    } else if (opcode == 0x4b && pp == 2) {
        op = Op::tilestored;
    } else if (opcode == 0x5c && pp == 2) {
        op = Op::tdpbf16ps;
    } else if (opcode == 0x5e) {
        // AMX-INT8: the prefix names the signedness of (src1, src2) bytes. F2: SS, F3: SU,
        // 66: US, NP: UU (SDM Vol. 2, TDPBSSD/TDPBSUD/TDPBUSD/TDPBUUD).
        constexpr Op kByPp[4] = {Op::tdpbuud, Op::tdpbusd, Op::tdpbsud, Op::tdpbssd};
        op = kByPp[pp];
    } else {
        return false;
    }
    const char* name = insn_name(op);
    if (vex_w) return reject(lookahead, rip, name, "VEX.W must be 0");
    if (vex_l) return reject(lookahead, rip, name, "VEX.L must be 0");
    if (!is_tmul(op) && vvvv != 0) return reject(lookahead, rip, name, "VEX.vvvv must be 1111b");

    Insn insn{};
    insn.op = op;
    insn.rip = rip;
    insn.tile_reg = vex_r | reg;
    insn.tile_rm = vex_b | rm;
    insn.tile_vvvv = vvvv;
    int len = i + 5;  // prefixes, C4 xx xx, opcode, ModRM

    switch (op) {
        case Op::tilerelease:
            if (modrm != 0xc0) return reject(lookahead, rip, name, "ModRM must be C0");
            break;
        case Op::tilezero:
            if (mod != 3 || rm != 0) return reject(lookahead, rip, name, "ModRM must be 11:rrr:000");
            break;
        case Op::tdpbf16ps:
        case Op::tdpbssd:
        case Op::tdpbsud:
        case Op::tdpbusd:
        case Op::tdpbuud:
            if (mod != 3) return reject(lookahead, rip, name, "ModRM must be 11:rrr:bbb");
            break;
        case Op::ldtilecfg:
        case Op::sttilecfg:
            if (mod == 3) return reject(lookahead, rip, name, "memory operand required");
            if (vex_r | reg) return reject(lookahead, rip, name, "ModRM.reg must be 000");
            break;
        case Op::tileloadd:
        case Op::tileloaddt1:
        case Op::tilestored:
            if (mod == 3 || rm != 4) return reject(lookahead, rip, name, "SIB memory operand required");
            break;
    }

    if (mod != 3) {
        const bool sibmem = op == Op::tileloadd || op == Op::tileloaddt1 || op == Op::tilestored;
        uint64_t ea = 0;
        bool rip_relative = false;
        if (rm == 4) {
            const uint8_t sib = p[len++];
            const int scale = sib >> 6;
            const int index = vex_x | ((sib >> 3) & 7);
            const int base = sib & 7;
            if (index != 4) {
                const uint64_t scaled = greg(uc, index) << scale;
                // sibmem (TILELOADD/TILESTORED): index << scale is the row stride and is not
                // part of the address; for an ordinary m512 it is.
                if (sibmem) {
                    insn.stride = scaled;
                } else {
                    ea += scaled;
                }
            }
            if (base == 5 && mod == 0) {
                ea += uint64_t(int64_t(read_disp32(p + len)));
                len += 4;
            } else {
                ea += greg(uc, vex_b | base);
            }
        } else if (rm == 5 && mod == 0) {
            rip_relative = true;
            ea += uint64_t(int64_t(read_disp32(p + len)));
            len += 4;
        } else {
            ea += greg(uc, vex_b | rm);
        }
        if (mod == 1) {
            ea += uint64_t(int64_t(int8_t(p[len])));
            len += 1;
        } else if (mod == 2) {
            ea += uint64_t(int64_t(read_disp32(p + len)));
            len += 4;
        }
        if (rip_relative) ea += rip + uint64_t(len);
        if (addr32) {
            ea &= 0xffffffffu;
            insn.stride &= 0xffffffffu;
        }
        if (seg) ea += segment_base(seg);
        insn.addr = ea;
    }
    insn.length = len;
    *out = insn;
    return true;
}

}  // namespace amxemu

// amxemu: SIGILL trap-and-emulate for AMX-TILE, AMX-BF16 and AMX-INT8 (see amxemu.h and
// README.md). The arithmetic of the dot products is in amxemu_bf16.cc and amxemu_int8.cc.
//
// Everything reachable from the signal handler is async-signal-safe: no malloc, no stdio, no
// locks. Messages are built in a stack buffer and written with write(2); a violation ends in
// abort(). Tile state is per thread, in initial-exec TLS (see ThreadTiles).
#include "amxemu/amxemu.h"
#include "amxemu/amxemu_bf16.h"
#include "amxemu/amxemu_int8.h"

#include <asm/prctl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

// Palette 1, the only one the hardware has: 8 tiles of at most 16 rows x 64 bytes.
constexpr int kTiles = 8;
constexpr int kMaxRows = 16;
constexpr int kBytesPerRow = 64;
constexpr int kTmulMaxK = 16;  // src2 rows (K dwords: bf16 pairs, byte quads) in one TMUL op
constexpr int kTmulMaxN = 16;  // dword (fp32, int32) columns of dest in one TMUL op
constexpr std::size_t kTileCfgBytes = 64;

// ---------------------------------------------------------------------------------------------
// Per-thread tile state.
//
// initial-exec TLS: accessed as %fs:offset, so the handler never calls __tls_get_addr (which may
// allocate on a thread's first access). The price is that libamxemu.so must be in the initial
// set of libraries (LD_PRELOAD or DT_NEEDED); dlopen() of it is not supported, since ~8.3 KiB of
// static TLS would not fit in the surplus glibc keeps for dlopen. A new thread starts in the
// INIT state (zero-initialised TLS); fork() copies the forking thread's state, as the hardware
// copies the XSAVE state.
struct TileConfig {
    uint8_t configured;  // TILES_CONFIGURED
    uint8_t palette;
    uint8_t start_row;
    uint16_t colsb[kTiles];
    uint8_t rows[kTiles];
};

struct alignas(64) ThreadTiles {
    uint8_t data[kTiles][kMaxRows][kBytesPerRow];
    TileConfig cfg;
};

__thread ThreadTiles t_tiles __attribute__((tls_model("initial-exec")));

// ---------------------------------------------------------------------------------------------
// Counters, in the order of struct amxemu_counts: the INT8 dot products came after passed_on,
// and the traps after them, which keeps the fields of the older layouts where they were.
enum Kind : int {
    kLdtilecfg,
    kSttilecfg,
    kTilerelease,
    kTilezero,
    kTileloadd,
    kTileloaddt1,
    kTilestored,
    kTdpbf16ps,
    kPassedOn,
    kTdpbssd,
    kTdpbsud,
    kTdpbusd,
    kTdpbuud,
    kTraps,
    kKinds
};
constexpr const char* kKindNames[kKinds] = {"ldtilecfg",  "sttilecfg", "tilerelease", "tilezero",
                                            "tileloadd",  "tileloaddt1", "tilestored", "tdpbf16ps",
                                            "passed_on",  "tdpbssd",   "tdpbsud",     "tdpbusd",
                                            "tdpbuud",    "traps"};
// Indexed by Op (= Kind); passed_on and traps are no instructions.
constexpr const char* kInsnNames[kKinds] = {"LDTILECFG",  "STTILECFG", "TILERELEASE", "TILEZERO",
                                            "TILELOADD",  "TILELOADDT1", "TILESTORED", "TDPBF16PS",
                                            nullptr,      "TDPBSSD",   "TDPBSUD",     "TDPBUSD",
                                            "TDPBUUD",    nullptr};
static_assert(sizeof(amxemu_counts) == kKinds * sizeof(uint64_t), "one counter per kind");

// Whether the 15 bytes at `rip` (the longest instruction) lie in the page of the byte before
// it, the last of the instruction the CPU just decoded, and so can be read without a fault.
bool fetchable_after(uint64_t rip) { return ((rip - 1) >> 12) == ((rip + 14) >> 12); }

std::atomic<uint64_t> g_counts[kKinds];
bool g_print_stats = false;
// TDPBF16PS on AVX2 and FMA registers where the CPU has them (amxemu_bf16.h).
bool g_vector_runs = false;
bool g_vector_arithmetic = false;

// ---------------------------------------------------------------------------------------------
// Messages without stdio.
class Msg {
public:
    Msg& s(const char* str) {
        while (*str && n_ < sizeof(buf_) - 1) buf_[n_++] = *str++;
        return *this;
    }
    Msg& u(uint64_t v) {
        char tmp[24];
        int k = 0;
        do {
            tmp[k++] = char('0' + v % 10);
            v /= 10;
        } while (v);
        while (k && n_ < sizeof(buf_) - 1) buf_[n_++] = tmp[--k];
        return *this;
    }
    Msg& x(uint64_t v) {
        s("0x");
        char tmp[16];
        int k = 0;
        do {
            tmp[k++] = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v);
        while (k && n_ < sizeof(buf_) - 1) buf_[n_++] = tmp[--k];
        return *this;
    }
    Msg& tile(int t) { return s("tmm").u(uint64_t(t)); }
    void write_out() {
        buf_[n_++] = '\n';
        std::size_t off = 0;
        while (off < n_) {
            ssize_t w = write(STDERR_FILENO, buf_ + off, n_ - off);
            if (w <= 0) break;
            off += std::size_t(w);
        }
    }
    [[noreturn]] void die() {
        write_out();
        abort();
    }

private:
    char buf_[768];
    std::size_t n_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Decoding.
enum class Op : int {
    ldtilecfg = kLdtilecfg,
    sttilecfg = kSttilecfg,
    tilerelease = kTilerelease,
    tilezero = kTilezero,
    tileloadd = kTileloadd,
    tileloaddt1 = kTileloaddt1,
    tilestored = kTilestored,
    tdpbf16ps = kTdpbf16ps,
    tdpbssd = kTdpbssd,
    tdpbsud = kTdpbsud,
    tdpbusd = kTdpbusd,
    tdpbuud = kTdpbuud,
};

// The tile matrix multiplies: three tile operands (ModRM.reg, ModRM.r/m, VEX.vvvv).
bool is_tmul(Op op) {
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

const char* insn_name(Op op) { return kInsnNames[int(op)]; }

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

// Decodes the instruction at RIP. Returns false when it is not one of the emulated AMX
// instructions (the SIGILL then goes on). Encodings of an emulated opcode that the hardware
// rejects with #UD abort here, unless `lookahead` (then: false).
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
    const uint8_t v2 = p[i + 2];
    const uint8_t opcode = p[i + 3];
    const uint8_t modrm = p[i + 4];
    if ((v1 & 0x1f) != 0x02) return false;
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

// ---------------------------------------------------------------------------------------------
// The program's memory. A bad address in a tile instruction must end in a message, not in a
// SIGSEGV inside this handler: the copies go through process_vm_readv/process_vm_writev on
// this very process, which check every address and fail with EFAULT where memcpy would fault.
// Reading or writing one's own memory needs no ptrace permission. Where a seccomp policy
// refuses the calls (ENOSYS, EPERM), the copy falls back to memcpy, which faults as before.
struct Span {
    void* local;   // the emulator's side (tile rows, a config buffer)
    uint64_t addr;  // the program's side
    std::size_t bytes;
};

// Copies spans[0..n) in order; returns how many were copied whole (n: all).
int copy_program_memory(const Span* spans, int n, bool to_program) {
    iovec local[kMaxRows], remote[kMaxRows];
    std::size_t total = 0;
    for (int i = 0; i < n; ++i) {
        local[i] = {spans[i].local, spans[i].bytes};
        remote[i] = {reinterpret_cast<void*>(spans[i].addr), spans[i].bytes};
        total += spans[i].bytes;
    }
    if (n == 0) return 0;
    const ssize_t done = to_program ? process_vm_writev(getpid(), local, n, remote, n, 0)
                                    : process_vm_readv(getpid(), local, n, remote, n, 0);
    if (done == ssize_t(total)) return n;
    if (done < 0 && errno != EFAULT) {
        for (int i = 0; i < n; ++i) {
            if (to_program) std::memcpy(remote[i].iov_base, local[i].iov_base, spans[i].bytes);
            else std::memcpy(local[i].iov_base, remote[i].iov_base, spans[i].bytes);
        }
        return n;
    }
    // The kernel never splits one element: count the whole ones before the first bad one.
    std::size_t left = done < 0 ? 0 : std::size_t(done);
    int whole = 0;
    while (whole < n && left >= spans[whole].bytes) left -= spans[whole++].bytes;
    return whole;
}

// ---------------------------------------------------------------------------------------------
// Checks.
void append_shape(Msg& m, const TileConfig& cfg, int t) {
    m.tile(t).s(" ").u(cfg.rows[t]).s("x").u(cfg.colsb[t]);
}

// "amxemu: EXC: INSN tiles at RIP: " for a message about instruction `in`.
Msg& describe(Msg& m, const Insn& in, const char* exc) {
    m.s("amxemu: ").s(exc).s(": ").s(insn_name(in.op));
    if (is_tmul(in.op)) {
        m.s(" ").tile(in.tile_reg).s(", ").tile(in.tile_rm).s(", ").tile(in.tile_vvvv);
    } else if (in.op == Op::tilezero || in.op == Op::tileloadd || in.op == Op::tileloaddt1 ||
               in.op == Op::tilestored) {
        m.s(" ").tile(in.tile_reg);
    }
    return m.s(" at ").x(in.rip).s(": ");
}

// Ends a message about a tile instruction with the shapes of its tiles.
void append_shapes(Msg& m, const Insn& in) {
    const TileConfig& cfg = t_tiles.cfg;
    if (is_tmul(in.op) || in.op == Op::tilezero || in.op == Op::tileloadd ||
        in.op == Op::tileloaddt1 || in.op == Op::tilestored) {
        m.s("; shapes rows x colsb:");
        if (!cfg.configured) {
            m.s(" tiles not configured");
        } else {
            m.s(" ");
            append_shape(m, cfg, in.tile_reg & 7);
            if (is_tmul(in.op)) {
                m.s(", ");
                append_shape(m, cfg, in.tile_rm & 7);
                m.s(", ");
                append_shape(m, cfg, in.tile_vvvv & 7);
            }
        }
    }
}

// Aborts with the instruction, its tiles and their shapes; `rel` (when not null) prints the
// two values that broke the rule, "va rel vb".
[[noreturn]] void tile_fault(const Insn& in, const char* exc, const char* why, uint64_t va = 0,
                             const char* rel = nullptr, uint64_t vb = 0) {
    Msg m;
    describe(m, in, exc).s(why);
    if (rel) m.s(" (").u(va).s(rel).u(vb).s(")");
    append_shapes(m, in);
    m.die();
}

// Aborts on a memory operand the program cannot read (or write): where the hardware would
// raise a page fault (SIGSEGV), the harness names the instruction, the row and the address.
// `row` < 0: the operand is not a tile row (LDTILECFG, STTILECFG).
[[noreturn]] void memory_fault(const Insn& in, const Span& span, int row, bool write) {
    Msg m;
    describe(m, in, "#PF");
    if (row >= 0) m.s("row ").u(uint64_t(row)).s(" ");
    m.s("memory ").x(span.addr).s("..").x(span.addr + span.bytes - 1);
    m.s(write ? " is not writable" : " is not readable");
    if (row >= 0) m.s(" (base ").x(in.addr).s(", stride ").u(in.stride).s(")");
    append_shapes(m, in);
    m.die();
}

// Copies `n` spans of one instruction's memory operand, or aborts naming the first bad one.
void copy_or_fault(const Insn& in, const Span* spans, int n, int first_row, bool to_program) {
    const int whole = copy_program_memory(spans, n, to_program);
    if (whole < n) memory_fault(in, spans[whole], first_row < 0 ? -1 : first_row + whole, to_program);
}

void require_tile(const Insn& in, int t, const char* role) {
    if (t >= kTiles) tile_fault(in, "#UD", role, uint64_t(t), " >= ", kTiles);
    if (!t_tiles.cfg.configured) tile_fault(in, "#UD", "TILES_CONFIGURED == 0 (no LDTILECFG)");
    if (t_tiles.cfg.rows[t] == 0) tile_fault(in, "#UD", "tile not configured (rows == 0)");
}

// ---------------------------------------------------------------------------------------------
// Instructions.
void zero_all_tile_data() { std::memset(t_tiles.data, 0, sizeof(t_tiles.data)); }

void do_ldtilecfg(const Insn& in) {
    uint8_t buf[kTileCfgBytes];
    const Span span{buf, in.addr, sizeof(buf)};
    copy_or_fault(in, &span, 1, -1, false);
    const uint8_t palette = buf[0];
    if (palette == 0) {
        std::memset(&t_tiles.cfg, 0, sizeof(t_tiles.cfg));
        zero_all_tile_data();
        return;
    }
    if (palette != 1) tile_fault(in, "#GP", "palette not supported", palette, " != ", 1);
    for (int b = 2; b < 16; ++b)
        if (buf[b]) tile_fault(in, "#GP", "reserved byte nonzero", uint64_t(b), " = ", buf[b]);
    for (int b = 16 + 2 * kTiles; b < 48; ++b)
        if (buf[b]) tile_fault(in, "#GP", "reserved byte nonzero", uint64_t(b), " = ", buf[b]);
    for (int b = 48 + kTiles; b < 64; ++b)
        if (buf[b]) tile_fault(in, "#GP", "reserved byte nonzero", uint64_t(b), " = ", buf[b]);
    TileConfig cfg{};
    cfg.configured = 1;
    cfg.palette = palette;
    cfg.start_row = buf[1];
    for (int t = 0; t < kTiles; ++t) {
        cfg.colsb[t] = uint16_t(buf[16 + 2 * t] | (buf[17 + 2 * t] << 8));
        cfg.rows[t] = buf[48 + t];
        if (cfg.colsb[t] > kBytesPerRow)
            tile_fault(in, "#GP", "colsb > 64 for tile", uint64_t(t), ": ", cfg.colsb[t]);
        if (cfg.rows[t] > kMaxRows)
            tile_fault(in, "#GP", "rows > 16 for tile", uint64_t(t), ": ", cfg.rows[t]);
        if ((cfg.rows[t] == 0) != (cfg.colsb[t] == 0))
            tile_fault(in, "#GP", "rows and colsb must both be zero or both nonzero for tile",
                       uint64_t(t), ": rows ", cfg.rows[t]);
    }
    t_tiles.cfg = cfg;
    zero_all_tile_data();
}

void do_sttilecfg(const Insn& in) {
    uint8_t buf[kTileCfgBytes] = {};
    const TileConfig& cfg = t_tiles.cfg;
    if (cfg.configured) {
        buf[0] = cfg.palette;
        buf[1] = cfg.start_row;
        for (int t = 0; t < kTiles; ++t) {
            buf[16 + 2 * t] = uint8_t(cfg.colsb[t] & 0xff);
            buf[17 + 2 * t] = uint8_t(cfg.colsb[t] >> 8);
            buf[48 + t] = cfg.rows[t];
        }
    }
    const Span span{buf, in.addr, sizeof(buf)};
    copy_or_fault(in, &span, 1, -1, true);
}

void do_tilerelease() {
    std::memset(&t_tiles.cfg, 0, sizeof(t_tiles.cfg));
    zero_all_tile_data();
}

void do_tilezero(const Insn& in) {
    require_tile(in, in.tile_reg, "tile number");
    std::memset(t_tiles.data[in.tile_reg], 0, sizeof(t_tiles.data[0]));
    t_tiles.cfg.start_row = 0;
}

void check_start_row(const Insn& in, int t) {
    const TileConfig& cfg = t_tiles.cfg;
    if (cfg.start_row >= cfg.rows[t])
        tile_fault(in, "#UD", "start_row >= rows", cfg.start_row, " >= ", cfg.rows[t]);
}

void do_tileloadd(const Insn& in) {
    const int t = in.tile_reg;
    require_tile(in, t, "tile number");
    check_start_row(in, t);
    TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[t];
    const int colsb = cfg.colsb[t];
    uint8_t(*data)[kBytesPerRow] = t_tiles.data[t];
    for (int r = cfg.start_row; r < kMaxRows; ++r) std::memset(data[r], 0, kBytesPerRow);
    Span spans[kMaxRows];
    int n = 0;
    for (int r = cfg.start_row; r < rows; ++r)
        spans[n++] = {data[r], in.addr + uint64_t(r) * in.stride, std::size_t(colsb)};
    copy_or_fault(in, spans, n, cfg.start_row, false);
    cfg.start_row = 0;
}

void do_tilestored(const Insn& in) {
    const int t = in.tile_reg;
    require_tile(in, t, "tile number");
    check_start_row(in, t);
    TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[t];
    const int colsb = cfg.colsb[t];
    Span spans[kMaxRows];
    int n = 0;
    for (int r = cfg.start_row; r < rows; ++r)
        spans[n++] = {t_tiles.data[t][r], in.addr + uint64_t(r) * in.stride, std::size_t(colsb)};
    copy_or_fault(in, spans, n, cfg.start_row, true);
    cfg.start_row = 0;
}

// The #UD checks every TMUL op shares (TDPBF16PS and the INT8 forms, SDM exception class
// AMX-E4): three distinct configured tiles whose shapes make dest = src1 x src2 in dwords.
void check_tmul_tiles(const Insn& in) {
    const int d = in.tile_reg, a = in.tile_rm, b = in.tile_vvvv;
    if (d == a || d == b || a == b) tile_fault(in, "#UD", "tile operands must be distinct");
    require_tile(in, d, "srcdest tile number");
    require_tile(in, a, "src1 tile number");
    require_tile(in, b, "src2 tile number");
    const TileConfig& cfg = t_tiles.cfg;
    if (cfg.colsb[d] % 4) tile_fault(in, "#UD", "srcdest.colsb % 4 != 0");
    if (cfg.colsb[a] % 4) tile_fault(in, "#UD", "src1.colsb % 4 != 0");
    if (cfg.colsb[b] % 4) tile_fault(in, "#UD", "src2.colsb % 4 != 0");
    if (cfg.colsb[d] != cfg.colsb[b])
        tile_fault(in, "#UD", "srcdest.colsb != src2.colsb", cfg.colsb[d], " != ", cfg.colsb[b]);
    if (cfg.rows[d] != cfg.rows[a])
        tile_fault(in, "#UD", "srcdest.rows != src1.rows", cfg.rows[d], " != ", cfg.rows[a]);
    if (cfg.colsb[a] / 4 != cfg.rows[b])
        tile_fault(in, "#UD", "src1.colsb / 4 != src2.rows", cfg.colsb[a] / 4u, " != ",
                   cfg.rows[b]);
    if (cfg.colsb[d] / 4 > kTmulMaxN)
        tile_fault(in, "#UD", "srcdest.colsb / 4 > tmul_maxn", cfg.colsb[d] / 4u, " > ",
                   kTmulMaxN);
    if (cfg.rows[b] > kTmulMaxK)
        tile_fault(in, "#UD", "src2.rows > tmul_maxk", cfg.rows[b], " > ", kTmulMaxK);
}

// The SDM's write_row_and_zero and zero_upper_rows: dest keeps only its configured rows x
// n_out dwords; the rest of the tile reads zero afterwards; start_row back to 0.
void zero_outside_dest(int d, int rows, int n_out) {
    uint8_t(*dst)[kBytesPerRow] = t_tiles.data[d];
    for (int m = 0; m < rows; ++m) std::memset(dst[m] + 4 * n_out, 0, std::size_t(kBytesPerRow - 4 * n_out));
    for (int m = rows; m < kMaxRows; ++m) std::memset(dst[m], 0, kBytesPerRow);
    t_tiles.cfg.start_row = 0;
}

// TDPBF16PS: the tile checks, then the arithmetic (amxemu_bf16.cc).
void do_tdpbf16ps(const Insn& in) {
    check_tmul_tiles(in);
    const int d = in.tile_reg;
    const TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[d];
    const int n_out = cfg.colsb[d] / 4;
    amxemu::bf16_dot_tile(rows, n_out, cfg.colsb[in.tile_rm] / 4, t_tiles.data[d], t_tiles.data[in.tile_rm],
                          t_tiles.data[in.tile_vvvv], g_vector_arithmetic);
    zero_outside_dest(d, rows, n_out);
}

// TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD: the same tile checks, then INT32 sums of byte products
// (amxemu_int8.cc).
void do_tdpb_int8(const Insn& in, amxemu::Int8Signs signs) {
    check_tmul_tiles(in);
    const int d = in.tile_reg;
    const TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[d];
    const int n_out = cfg.colsb[d] / 4;
    amxemu::int8_dot_tile(signs, rows, n_out, cfg.colsb[in.tile_rm] / 4, t_tiles.data[d], t_tiles.data[in.tile_rm],
                          t_tiles.data[in.tile_vvvv]);
    zero_outside_dest(d, rows, n_out);
}

void execute(const Insn& in) {
    switch (in.op) {
        case Op::ldtilecfg: do_ldtilecfg(in); break;
        case Op::sttilecfg: do_sttilecfg(in); break;
        case Op::tilerelease: do_tilerelease(); break;
        case Op::tilezero: do_tilezero(in); break;
        case Op::tileloadd:
        case Op::tileloaddt1: do_tileloadd(in); break;
        case Op::tilestored: do_tilestored(in); break;
        case Op::tdpbf16ps: do_tdpbf16ps(in); break;
        case Op::tdpbssd: do_tdpb_int8(in, {true, true}); break;
        case Op::tdpbsud: do_tdpb_int8(in, {true, false}); break;
        case Op::tdpbusd: do_tdpb_int8(in, {false, true}); break;
        case Op::tdpbuud: do_tdpb_int8(in, {false, false}); break;
    }
}

// ---------------------------------------------------------------------------------------------
// The handler, and the program's own SIGILL disposition behind it.
//
// The emulator must stay the SIGILL handler even when the program installs its own later
// (CMocka installs one around every test). sigaction(), signal() and glibc's other ways to set
// a disposition (bsd_signal, sysv_signal, sigset, sigignore) are interposed for SIGILL only:
// what the program installs is recorded in g_chained and gets every SIGILL that is not an
// emulated AMX instruction; what the program reads back is its own disposition.
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);
using SigignoreFn = int (*)(int);
SigactionFn g_real_sigaction = nullptr;
SignalFn g_real_signal = nullptr;
SignalFn g_real_sysv_signal = nullptr;
SignalFn g_real_sigset = nullptr;
SigignoreFn g_real_sigignore = nullptr;
bool g_installed = false;
struct sigaction g_chained;
bool g_held = false;  // sigset(SIGILL, SIG_HOLD) in effect

template <typename Fn>
void resolve_one(Fn* fn, const char* name) {
    if (!*fn) *fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void resolve_real() {
    resolve_one(&g_real_sigaction, "sigaction");
    resolve_one(&g_real_signal, "signal");
    resolve_one(&g_real_sysv_signal, "sysv_signal");
    resolve_one(&g_real_sigset, "sigset");
    resolve_one(&g_real_sigignore, "sigignore");
}

// The program's view of SIGILL: records `act` (when not null) as the chained disposition and
// returns the previous one in `old` (when not null).
void exchange_chained(const struct sigaction* act, struct sigaction* old) {
    const struct sigaction prev = g_chained;
    if (act) g_chained = *act;
    if (old) *old = prev;
}

// signal()-style: `handler` with `flags`, its own signal in the mask when `mask_self`.
// Returns the previous handler (sa_handler shares storage with sa_sigaction).
sighandler_t set_chained_handler(sighandler_t handler, int flags, bool mask_self) {
    struct sigaction next {}, prev {};
    next.sa_handler = handler;
    next.sa_flags = flags;
    sigemptyset(&next.sa_mask);
    if (mask_self) sigaddset(&next.sa_mask, SIGILL);
    exchange_chained(&next, &prev);
    return prev.sa_handler;
}

void pass_on(int sig, siginfo_t* info, void* uc) {
    g_counts[kPassedOn].fetch_add(1, std::memory_order_relaxed);
    const struct sigaction prev = g_chained;
    const bool siginfo = (prev.sa_flags & SA_SIGINFO) != 0;
    // sa_handler and sa_sigaction share storage: SIG_DFL and SIG_IGN read the same in both.
    // A held SIGILL (sigset) would be blocked: the kernel then delivers it with the default.
    if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN || g_held) {
        // A synchronous SIGILL cannot be ignored: restore the default action and return; the
        // instruction faults again and the process dies of SIGILL, with a core if enabled.
        struct sigaction def {};
        def.sa_handler = SIG_DFL;
        sigemptyset(&def.sa_mask);
        g_real_sigaction(SIGILL, &def, nullptr);
        return;
    }
    if (prev.sa_flags & SA_RESETHAND) {
        std::memset(&g_chained, 0, sizeof(g_chained));
        g_chained.sa_handler = SIG_DFL;
    }
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &prev.sa_mask, &old);
    if (siginfo) {
        prev.sa_sigaction(sig, info, uc);
    } else {
        prev.sa_handler(sig);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void on_sigill(int sig, siginfo_t* info, void* uc_void) {
    const int saved_errno = errno;  // the memory copies may set it; the program must not see it
    ucontext_t* uc = static_cast<ucontext_t*>(uc_void);
    Insn in;
    if (!decode(uc, &in, false)) {
        pass_on(sig, info, uc_void);
        errno = saved_errno;
        return;
    }
    // The handler starts with the default MXCSR; set it anyway: round to nearest, all
    // exceptions masked, no FTZ/DAZ (the emulation flushes by itself). The interrupted
    // context's MXCSR comes back on sigreturn.
    _mm_setcsr(0x1f80);
    g_counts[kTraps].fetch_add(1, std::memory_order_relaxed);
    // Then every emulated instruction that directly follows: the CPU would trap on it next,
    // with the same registers (tile instructions write no general register, flag or vector
    // register), so running it here changes nothing but the count of traps. A trap costs
    // about 15 us on the virtual machines the tests run on, most of the harness's time; the
    // kernels' loops issue their loads and dot products back to back (the FP32 chain's step:
    // 2 traps for its 6 instructions). An encoding the hardware rejects is left to trap by
    // itself.
    for (;;) {
        execute(in);
        g_counts[int(in.op)].fetch_add(1, std::memory_order_relaxed);
        uc->uc_mcontext.gregs[REG_RIP] += in.length;
        if (!fetchable_after(uint64_t(uc->uc_mcontext.gregs[REG_RIP])) || !decode(uc, &in, true)) break;
    }
    errno = saved_errno;
}

void print_stats() {
    for (int k = 0; k < kKinds; ++k)
        Msg().s("amxemu: ").s(kKindNames[k]).s("=").u(g_counts[k].load()).write_out();
}

__attribute__((constructor)) void amxemu_init() {
    resolve_real();
    if (!g_real_sigaction) {
        Msg().s("amxemu: cannot resolve sigaction; the AMX emulator is not installed").write_out();
        return;
    }
    struct sigaction sa {};
    sa.sa_sigaction = on_sigill;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (g_real_sigaction(SIGILL, &sa, &g_chained) != 0) {
        Msg().s("amxemu: sigaction(SIGILL) failed; the AMX emulator is not installed").write_out();
        return;
    }
    g_installed = true;
    g_vector_runs = amxemu::bf16_vector_path_runs();
    g_vector_arithmetic = g_vector_runs;
    const char* stats = getenv("AMXEMU_STATS");
    g_print_stats = stats && stats[0] == '1' && stats[1] == '\0';
}

__attribute__((destructor)) void amxemu_fini() {
    if (g_print_stats) print_stats();
}

}  // namespace

extern "C" {

AMXEMU_API int amxemu_harness_version(void) { return 1; }

AMXEMU_API void amxemu_counters(struct amxemu_counts* out) {
    uint64_t v[kKinds];
    for (int k = 0; k < kKinds; ++k) v[k] = g_counts[k].load(std::memory_order_relaxed);
    std::memcpy(out, v, sizeof(v));
}

AMXEMU_API void amxemu_reset_counters(void) {
    for (auto& c : g_counts) c.store(0, std::memory_order_relaxed);
}

AMXEMU_API void amxemu_tile_bytes(int tile, void* out) {
    std::memcpy(out, t_tiles.data[tile & (kTiles - 1)], sizeof(t_tiles.data[0]));
}

AMXEMU_API int amxemu_use_vector_arithmetic(int on) {
    g_vector_arithmetic = on && g_vector_runs;
    return g_vector_arithmetic;
}

AMXEMU_API int sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigaction(sig, act, old);
    exchange_chained(act, old);
    return 0;
}

// glibc's own disposition functions call its internal sigaction, not the interposed one, so
// each that a program may use to set SIGILL is interposed too, with glibc's flags and mask.
AMXEMU_API sighandler_t signal(int sig, sighandler_t handler) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_signal(sig, handler);
    return set_chained_handler(handler, SA_RESTART, true);
}

AMXEMU_API sighandler_t bsd_signal(int sig, sighandler_t handler) noexcept {
    return signal(sig, handler);
}

// System V semantics: one shot, the signal not blocked in its handler. Also what signal()
// is for a program compiled with -D_XOPEN_SOURCE and no _DEFAULT_SOURCE (__sysv_signal).
AMXEMU_API sighandler_t sysv_signal(int sig, sighandler_t handler) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sysv_signal(sig, handler);
    return set_chained_handler(handler, SA_RESETHAND | SA_NODEFER, false);
}

AMXEMU_API sighandler_t __sysv_signal(int sig, sighandler_t handler) noexcept {
    return sysv_signal(sig, handler);
}

AMXEMU_API int sigignore(int sig) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigignore(sig);
    set_chained_handler(SIG_IGN, 0, false);
    return 0;
}

// sigset(SIGILL, SIG_HOLD) records the hold instead of blocking SIGILL: a blocked synchronous
// SIGILL kills the process, so the emulator could not run. AMX hardware ignores the hold for
// the instructions it runs; for any other illegal instruction the hold kills the process, as
// it would there. Any other disposition releases the hold (and unblocks SIGILL, as glibc does).
AMXEMU_API sighandler_t sigset(int sig, sighandler_t disp) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigset(sig, disp);
    if (disp == SIG_HOLD) {
        const bool was_held = g_held;
        g_held = true;
        return was_held ? SIG_HOLD : g_chained.sa_handler;
    }
    sigset_t ill, old_mask;
    sigemptyset(&ill);
    sigaddset(&ill, SIGILL);
    pthread_sigmask(SIG_UNBLOCK, &ill, &old_mask);
    const bool was_held = g_held || sigismember(&old_mask, SIGILL);
    g_held = false;
    const sighandler_t prev = set_chained_handler(disp, 0, false);
    return was_held ? SIG_HOLD : prev;
}

}  // extern "C"

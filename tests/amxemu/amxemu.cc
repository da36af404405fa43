// amxemu: SIGILL trap-and-emulate for AMX-TILE and AMX-BF16 (see amxemu.h and README.md).
//
// Everything reachable from the signal handler is async-signal-safe: no malloc, no stdio, no
// locks. Messages are built in a stack buffer and written with write(2); a violation ends in
// abort(). Tile state is per thread, in initial-exec TLS (see ThreadTiles).
#include "tests/amxemu/amxemu.h"

#include <asm/prctl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

// Palette 1, the only one the hardware has: 8 tiles of at most 16 rows x 64 bytes.
constexpr int kTiles = 8;
constexpr int kMaxRows = 16;
constexpr int kBytesPerRow = 64;
constexpr int kTmulMaxK = 16;  // dword pairs along K in one TDPBF16PS
constexpr int kTmulMaxN = 16;  // fp32 columns in one TDPBF16PS
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
// Counters.
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
    kKinds
};
constexpr const char* kKindNames[kKinds] = {"ldtilecfg",  "sttilecfg",   "tilerelease",
                                            "tilezero",   "tileloadd",   "tileloaddt1",
                                            "tilestored", "tdpbf16ps",   "passed_on"};
constexpr const char* kInsnNames[kPassedOn] = {"LDTILECFG",   "STTILECFG", "TILERELEASE",
                                               "TILEZERO",    "TILELOADD", "TILELOADDT1",
                                               "TILESTORED",  "TDPBF16PS"};
static_assert(sizeof(amxemu_counts) == kKinds * sizeof(uint64_t), "one counter per kind");

std::atomic<uint64_t> g_counts[kKinds];
bool g_print_stats = false;

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
};

struct Insn {
    Op op;
    uint64_t rip;
    int length;
    int tile_reg;   // ModRM.reg (with VEX.R): tmm operand of all but LDTILECFG/STTILECFG
    int tile_rm;    // ModRM.r/m (with VEX.B): src1 of TDPBF16PS
    int tile_vvvv;  // VEX.vvvv: src2 of TDPBF16PS
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

// Decodes the instruction at RIP. Returns false when it is not one of the emulated AMX
// instructions (the SIGILL then goes on). Encodings of an emulated opcode that the hardware
// rejects with #UD abort here.
bool decode(const ucontext_t* uc, Insn* out) {
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
    } else {
        return false;
    }
    const char* name = insn_name(op);
    if (vex_w) encoding_ud(rip, name, "VEX.W must be 0");
    if (vex_l) encoding_ud(rip, name, "VEX.L must be 0");
    if (op != Op::tdpbf16ps && vvvv != 0) encoding_ud(rip, name, "VEX.vvvv must be 1111b");

    Insn insn{};
    insn.op = op;
    insn.rip = rip;
    insn.tile_reg = vex_r | reg;
    insn.tile_rm = vex_b | rm;
    insn.tile_vvvv = vvvv;
    int len = i + 5;  // prefixes, C4 xx xx, opcode, ModRM

    switch (op) {
        case Op::tilerelease:
            if (modrm != 0xc0) encoding_ud(rip, name, "ModRM must be C0");
            break;
        case Op::tilezero:
            if (mod != 3 || rm != 0) encoding_ud(rip, name, "ModRM must be 11:rrr:000");
            break;
        case Op::tdpbf16ps:
            if (mod != 3) encoding_ud(rip, name, "ModRM must be 11:rrr:bbb");
            break;
        case Op::ldtilecfg:
        case Op::sttilecfg:
            if (mod == 3) encoding_ud(rip, name, "memory operand required");
            if (vex_r | reg) encoding_ud(rip, name, "ModRM.reg must be 000");
            break;
        case Op::tileloadd:
        case Op::tileloaddt1:
        case Op::tilestored:
            if (mod == 3 || rm != 4) encoding_ud(rip, name, "SIB memory operand required");
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
// Checks.
void append_shape(Msg& m, const TileConfig& cfg, int t) {
    m.tile(t).s(" ").u(cfg.rows[t]).s("x").u(cfg.colsb[t]);
}

// Aborts with the instruction, its tiles and their shapes; `rel` (when not null) prints the
// two values that broke the rule, "va rel vb".
[[noreturn]] void tile_fault(const Insn& in, const char* exc, const char* why, uint64_t va = 0,
                             const char* rel = nullptr, uint64_t vb = 0) {
    const TileConfig& cfg = t_tiles.cfg;
    Msg m;
    m.s("amxemu: ").s(exc).s(": ").s(insn_name(in.op));
    switch (in.op) {
        case Op::tdpbf16ps:
            m.s(" ").tile(in.tile_reg).s(", ").tile(in.tile_rm).s(", ").tile(in.tile_vvvv);
            break;
        case Op::tilezero:
        case Op::tileloadd:
        case Op::tileloaddt1:
        case Op::tilestored:
            m.s(" ").tile(in.tile_reg);
            break;
        default:
            break;
    }
    m.s(" at ").x(in.rip).s(": ").s(why);
    if (rel) m.s(" (").u(va).s(rel).u(vb).s(")");
    if (in.op == Op::tdpbf16ps || in.op == Op::tilezero || in.op == Op::tileloadd ||
        in.op == Op::tileloaddt1 || in.op == Op::tilestored) {
        m.s("; shapes rows x colsb:");
        if (!cfg.configured) {
            m.s(" tiles not configured");
        } else {
            m.s(" ");
            append_shape(m, cfg, in.tile_reg & 7);
            if (in.op == Op::tdpbf16ps) {
                m.s(", ");
                append_shape(m, cfg, in.tile_rm & 7);
                m.s(", ");
                append_shape(m, cfg, in.tile_vvvv & 7);
            }
        }
    }
    m.die();
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
    std::memcpy(buf, reinterpret_cast<const void*>(in.addr), sizeof(buf));
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
    std::memcpy(reinterpret_cast<void*>(in.addr), buf, sizeof(buf));
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
    for (int r = cfg.start_row; r < rows; ++r) {
        const uint64_t src = in.addr + uint64_t(r) * in.stride;
        std::memcpy(data[r], reinterpret_cast<const void*>(src), std::size_t(colsb));
    }
    cfg.start_row = 0;
}

void do_tilestored(const Insn& in) {
    const int t = in.tile_reg;
    require_tile(in, t, "tile number");
    check_start_row(in, t);
    TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[t];
    const int colsb = cfg.colsb[t];
    for (int r = cfg.start_row; r < rows; ++r) {
        const uint64_t dst = in.addr + uint64_t(r) * in.stride;
        std::memcpy(reinterpret_cast<void*>(dst), t_tiles.data[t][r], std::size_t(colsb));
    }
    cfg.start_row = 0;
}

// TDPBF16PS arithmetic: DAZ on every input, FTZ on every result, round to nearest even, no
// exceptions. Tininess is detected after rounding, as x86 does.
float bits_to_float(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof(f));
    return f;
}

uint32_t float_to_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof(b));
    return b;
}

float daz_fp32(float v) {
    const uint32_t b = float_to_bits(v);
    if ((b & 0x7f800000u) == 0) return bits_to_float(b & 0x80000000u);
    return v;
}

float bf16_daz(uint16_t h) {
    if ((h & 0x7f80u) == 0) h &= 0x8000u;
    return bits_to_float(uint32_t(h) << 16);
}

float ftz(float r) { return std::fabs(r) < FLT_MIN ? std::copysign(0.0f, r) : r; }

// Round-to-nearest-even a*b + c once, then flush a tiny result. fmaf rounds to the subnormal
// grid; a result of magnitude FLT_MIN may come from an exact value that, rounded to 24 bits
// with an unbounded exponent, stays below FLT_MIN (tiny after rounding): below
// FLT_MIN - 2^-151 it is flushed. The product of two bf16 is exact in double and the sum is
// exact in double in that range.
float fma_daz_ftz(float a, float b, float c) {
    const float r = std::fma(a, b, c);
    const float mag = std::fabs(r);
    if (mag < FLT_MIN) return std::copysign(0.0f, r);
    if (mag == FLT_MIN) {
        const double exact = double(a) * double(b) + double(c);
        if (std::fabs(exact) < 0x1.ffffffp-127) return std::copysign(0.0f, r);
    }
    return r;
}

float add_daz_ftz(float a, float b) { return ftz(daz_fp32(a) + daz_fp32(b)); }

uint16_t bf16_at(const uint8_t* row, int idx) {
    uint16_t h;
    std::memcpy(&h, row + 2 * idx, sizeof(h));
    return h;
}

void do_tdpbf16ps(const Insn& in) {
    const int d = in.tile_reg, a = in.tile_rm, b = in.tile_vvvv;
    if (d == a || d == b || a == b) tile_fault(in, "#UD", "tile operands must be distinct");
    require_tile(in, d, "srcdest tile number");
    require_tile(in, a, "src1 tile number");
    require_tile(in, b, "src2 tile number");
    TileConfig& cfg = t_tiles.cfg;
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

    const int rows = cfg.rows[d];
    const int n_out = cfg.colsb[d] / 4;
    const int k_pairs = cfg.colsb[a] / 4;
    uint8_t(*dst)[kBytesPerRow] = t_tiles.data[d];
    const uint8_t(*src1)[kBytesPerRow] = t_tiles.data[a];
    const uint8_t(*src2)[kBytesPerRow] = t_tiles.data[b];
    for (int m = 0; m < rows; ++m) {
        // The SDM's order: two FP32 chains per output (even and odd bf16 of each pair), each
        // fused-multiply-added along K from zero, then chain sum, then added to srcdest.
        float even[kTmulMaxN] = {};
        float odd[kTmulMaxN] = {};
        for (int k = 0; k < k_pairs; ++k) {
            const float a0 = bf16_daz(bf16_at(src1[m], 2 * k + 0));
            const float a1 = bf16_daz(bf16_at(src1[m], 2 * k + 1));
            for (int n = 0; n < n_out; ++n) {
                const float b0 = bf16_daz(bf16_at(src2[k], 2 * n + 0));
                const float b1 = bf16_daz(bf16_at(src2[k], 2 * n + 1));
                even[n] = fma_daz_ftz(a0, b0, even[n]);
                odd[n] = fma_daz_ftz(a1, b1, odd[n]);
            }
        }
        for (int n = 0; n < n_out; ++n) {
            float acc;
            std::memcpy(&acc, dst[m] + 4 * n, sizeof(acc));
            acc = add_daz_ftz(acc, add_daz_ftz(even[n], odd[n]));
            std::memcpy(dst[m] + 4 * n, &acc, sizeof(acc));
        }
        std::memset(dst[m] + 4 * n_out, 0, std::size_t(kBytesPerRow - 4 * n_out));
    }
    for (int m = rows; m < kMaxRows; ++m) std::memset(dst[m], 0, kBytesPerRow);
    cfg.start_row = 0;
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
    }
}

// ---------------------------------------------------------------------------------------------
// The handler, and the program's own SIGILL disposition behind it.
//
// The emulator must stay the SIGILL handler even when the program installs its own later
// (CMocka installs one around every test). sigaction() and signal() are interposed for SIGILL
// only: what the program installs is recorded in g_chained and gets every SIGILL that is not
// an emulated AMX instruction; what the program reads back is its own disposition.
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);
SigactionFn g_real_sigaction = nullptr;
SignalFn g_real_signal = nullptr;
bool g_installed = false;
struct sigaction g_chained;

void resolve_real() {
    if (!g_real_sigaction)
        g_real_sigaction = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
    if (!g_real_signal) g_real_signal = reinterpret_cast<SignalFn>(dlsym(RTLD_NEXT, "signal"));
}

void pass_on(int sig, siginfo_t* info, void* uc) {
    g_counts[kPassedOn].fetch_add(1, std::memory_order_relaxed);
    const struct sigaction prev = g_chained;
    const bool siginfo = (prev.sa_flags & SA_SIGINFO) != 0;
    // sa_handler and sa_sigaction share storage: SIG_DFL and SIG_IGN read the same in both.
    if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN) {
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
    ucontext_t* uc = static_cast<ucontext_t*>(uc_void);
    Insn in;
    if (!decode(uc, &in)) {
        pass_on(sig, info, uc_void);
        return;
    }
    // The handler starts with the default MXCSR; set it anyway: round to nearest, all
    // exceptions masked, no FTZ/DAZ (the emulation flushes by itself). The interrupted
    // context's MXCSR comes back on sigreturn.
    _mm_setcsr(0x1f80);
    execute(in);
    g_counts[int(in.op)].fetch_add(1, std::memory_order_relaxed);
    uc->uc_mcontext.gregs[REG_RIP] += in.length;
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

AMXEMU_API int sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigaction(sig, act, old);
    const struct sigaction prev = g_chained;
    if (act) g_chained = *act;
    if (old) *old = prev;
    return 0;
}

AMXEMU_API sighandler_t signal(int sig, sighandler_t handler) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_signal(sig, handler);
    const struct sigaction prev = g_chained;
    struct sigaction next {};
    next.sa_handler = handler;
    next.sa_flags = SA_RESTART;
    sigemptyset(&next.sa_mask);
    sigaddset(&next.sa_mask, SIGILL);
    g_chained = next;
    return prev.sa_handler;  // shares storage with sa_sigaction
}

}  // extern "C"

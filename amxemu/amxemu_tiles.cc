// The tile state and the instructions of amxemu_tiles.h.
#include "amxemu/amxemu_tiles.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "amxemu/amxemu_bf16.h"
#include "amxemu/amxemu_int8.h"
#include "amxemu/amxemu_message.h"

namespace amxemu {
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

// TILELOADD (to_program false) and TILESTORED (true): the rows start_row .. rows - 1 of the
// tile, colsb bytes each, from or to base + row * stride. A load zeroes the tile from start_row
// first (bytes past colsb and rows past rows read zero afterwards).
void move_tile_rows(const Insn& in, bool to_program) {
    const int t = in.tile_reg;
    require_tile(in, t, "tile number");
    check_start_row(in, t);
    TileConfig& cfg = t_tiles.cfg;
    uint8_t(*data)[kBytesPerRow] = t_tiles.data[t];
    if (!to_program)
        for (int r = cfg.start_row; r < kMaxRows; ++r) std::memset(data[r], 0, kBytesPerRow);
    Span spans[kMaxRows];
    int n = 0;
    for (int r = cfg.start_row; r < cfg.rows[t]; ++r)
        spans[n++] = {data[r], in.addr + uint64_t(r) * in.stride, std::size_t(cfg.colsb[t])};
    copy_or_fault(in, spans, n, cfg.start_row, to_program);
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

// TDPBF16PS: the tile checks, then the arithmetic (amxemu_bf16.cc; `vector`: its AVX2 path).
void do_tdpbf16ps(const Insn& in, bool vector) {
    check_tmul_tiles(in);
    const int d = in.tile_reg;
    const TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[d];
    const int n_out = cfg.colsb[d] / 4;
    bf16_dot_tile(rows, n_out, cfg.colsb[in.tile_rm] / 4, t_tiles.data[d], t_tiles.data[in.tile_rm],
                          t_tiles.data[in.tile_vvvv], vector);
    zero_outside_dest(d, rows, n_out);
}

// TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD: the same tile checks, then INT32 sums of byte products
// (amxemu_int8.cc).
void do_tdpb_int8(const Insn& in, Int8Signs signs) {
    check_tmul_tiles(in);
    const int d = in.tile_reg;
    const TileConfig& cfg = t_tiles.cfg;
    const int rows = cfg.rows[d];
    const int n_out = cfg.colsb[d] / 4;
    int8_dot_tile(signs, rows, n_out, cfg.colsb[in.tile_rm] / 4, t_tiles.data[d], t_tiles.data[in.tile_rm],
                          t_tiles.data[in.tile_vvvv]);
    zero_outside_dest(d, rows, n_out);
}

}  // namespace

void execute(const Insn& in, bool vector_bf16) {
    switch (in.op) {
        case Op::ldtilecfg: do_ldtilecfg(in); break;
        case Op::sttilecfg: do_sttilecfg(in); break;
        case Op::tilerelease: do_tilerelease(); break;
        case Op::tilezero: do_tilezero(in); break;
        case Op::tileloadd:
        case Op::tileloaddt1: move_tile_rows(in, false); break;
        case Op::tilestored: move_tile_rows(in, true); break;
        case Op::tdpbf16ps: do_tdpbf16ps(in, vector_bf16); break;
        case Op::tdpbssd: do_tdpb_int8(in, {true, true}); break;
        case Op::tdpbsud: do_tdpb_int8(in, {true, false}); break;
        case Op::tdpbusd: do_tdpb_int8(in, {false, true}); break;
        case Op::tdpbuud: do_tdpb_int8(in, {false, false}); break;
    }
}

void tile_bytes(int tile, void* out) {
    std::memcpy(out, t_tiles.data[tile & (kTiles - 1)], sizeof(t_tiles.data[0]));
}

}  // namespace amxemu

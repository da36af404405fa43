// Helpers shared by the amxemu tests: the LDTILECFG memory layout, bf16 conversions, and
// running a piece of code in a forked child that must abort with a given message.
#pragma once

#include <complex>  // before cmocka.h, whose fail() macro breaks <complex>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

// cmocka 1.1 declares its functions without extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cstdint>
#include <cstring>
#include <string>

namespace amxemu_test {

// The 64-byte LDTILECFG/STTILECFG operand (palette 1 uses tiles 0-7; the rest is reserved).
struct alignas(64) TileCfg {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};

    TileCfg& tile(int t, int rows_, int colsb_) {
        rows[t] = uint8_t(rows_);
        colsb[t] = uint16_t(colsb_);
        return *this;
    }
};
static_assert(sizeof(TileCfg) == 64, "LDTILECFG reads 64 bytes");

// GCC 12's AMX intrinsics do not tell the compiler which memory they touch: _tile_loadd and
// _tile_stream_loadd take only the address in a register (no memory operand, no clobber), and
// _tile_loadconfig/_tile_storeconfig name only the first 8 bytes of the 64-byte operand. Stores
// feeding them may be sunk past them or dropped, and STTILECFG results read from stale copies.
// These wrappers put a compiler barrier on the side that matters.
#define AMXEMU_FENCE() __asm__ volatile("" ::: "memory")
#define tile_loadd(t, base, stride) \
    do {                            \
        AMXEMU_FENCE();             \
        _tile_loadd(t, base, stride); \
    } while (0)
#define tile_stream_loadd(t, base, stride) \
    do {                                   \
        AMXEMU_FENCE();                    \
        _tile_stream_loadd(t, base, stride); \
    } while (0)
#define tile_loadconfig(cfg)    \
    do {                        \
        AMXEMU_FENCE();         \
        _tile_loadconfig(cfg);  \
    } while (0)
#define tile_storeconfig(cfg)   \
    do {                        \
        _tile_storeconfig(cfg); \
        AMXEMU_FENCE();         \
    } while (0)

inline uint32_t bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof(b));
    return b;
}

inline float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof(f));
    return f;
}

// Exact for the values the tests use (at most 8 significant bits); asserts so.
inline uint16_t bf16(float f) {
    const uint32_t b = bits(f);
    assert_int_equal(b & 0xffffu, 0);
    return uint16_t(b >> 16);
}

// Runs fn() in a forked child with stderr captured; the child must die of SIGABRT and its
// stderr must contain `needle`. Returns the captured text.
inline std::string expect_abort(void (*fn)(void), const char* needle) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) text.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) || text.find(needle) == std::string::npos) {
        print_error("child status %d, expected SIGABRT with \"%s\"; stderr:\n%s\n", status, needle,
                    text.c_str());
        fail();
    }
    return text;
}

}  // namespace amxemu_test

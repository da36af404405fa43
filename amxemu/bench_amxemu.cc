// Cost of the harness per trapped instruction: N traps of each kind, timed, in ns per
// instruction. The loops keep a branch between two instructions, so each is a trap of its own
// (the harness runs AMX instructions that directly follow a trapping one in the same trap);
// the count of traps is printed and checked. TILEZERO is almost all trap and decode; TDPBF16PS (16 x 16 x 32, full tiles)
// adds 8192 emulated bf16 FMAs, TDPBSSD (16 x 16 x 64) 16384 byte products.
// Usage: amxemu_bench [N]  (default 20000).
#include <immintrin.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "amxemu/amxemu.h"

namespace {

struct alignas(64) Cfg {
    unsigned char palette = 1, start_row = 0, reserved[14] = {};
    unsigned short colsb[16] = {};
    unsigned char rows[16] = {};
};

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 20000;
    Cfg cfg;
    for (int t = 0; t < 8; ++t) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    static unsigned char buf[16][64];
    std::memset(buf, 0x3f, sizeof(buf));
    __asm__ volatile("" ::: "memory");
    _tile_loadconfig(&cfg);
    _tile_loadd(1, buf, 64);
    _tile_loadd(2, buf, 64);

    double t0 = now_s();
    for (long i = 0; i < n; ++i) _tile_zero(0);
    const double zero_ns = (now_s() - t0) / double(n) * 1e9;

    t0 = now_s();
    for (long i = 0; i < n; ++i) _tile_loadd(3, buf, 64);
    const double load_ns = (now_s() - t0) / double(n) * 1e9;

    t0 = now_s();
    for (long i = 0; i < n; ++i) _tile_stored(3, buf, 64);
    const double store_ns = (now_s() - t0) / double(n) * 1e9;

    const long nd = n / 10 > 0 ? n / 10 : 1;
    t0 = now_s();
    for (long i = 0; i < nd; ++i) _tile_dpbf16ps(0, 1, 2);
    const double tdp_ns = (now_s() - t0) / double(nd) * 1e9;

    t0 = now_s();
    for (long i = 0; i < nd; ++i) _tile_dpbssd(0, 1, 2);
    const double int8_ns = (now_s() - t0) / double(nd) * 1e9;
    _tile_release();

    amxemu_counts c;
    amxemu_counters(&c);
    std::printf("amxemu_bench: tilezero %.0f ns, tileloadd %.0f ns, tilestored %.0f ns, "
                "tdpbf16ps(16x16x32) %.0f ns, tdpbssd(16x16x64) %.0f ns per trapped instruction\n",
                zero_ns, load_ns, store_ns, tdp_ns, int8_ns);
    std::printf("amxemu_bench: counted tilezero=%llu tileloadd=%llu tilestored=%llu tdpbf16ps=%llu tdpbssd=%llu "
                "traps=%llu\n",
                (unsigned long long)c.tilezero, (unsigned long long)c.tileloadd,
                (unsigned long long)c.tilestored, (unsigned long long)c.tdpbf16ps, (unsigned long long)c.tdpbssd,
                (unsigned long long)c.traps);
    // One trap per instruction, but the configuration and the two loads before the timed loops
    // and the release after them, which may share traps.
    const unsigned long long timed = 3ULL * (unsigned long long)n + 2ULL * (unsigned long long)nd;
    const bool ok = c.tilezero == (unsigned long long)n && c.tileloadd == (unsigned long long)n + 2 &&
                    c.tilestored == (unsigned long long)n && c.tdpbf16ps == (unsigned long long)nd &&
                    c.tdpbssd == (unsigned long long)nd && c.traps >= timed && c.traps <= timed + 4;
    if (!ok) std::printf("amxemu_bench: FAIL: the counts are not one trap per timed instruction\n");
    return ok ? 0 : 1;
}

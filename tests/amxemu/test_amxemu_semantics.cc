// The emulator alone: AMX intrinsics in this file (built with -mamx-tile -mamx-bf16) trap, and
// the results are checked against tiles computed by hand from the SDM pseudo-code.
#include <immintrin.h>

#include "amxemu/amxemu.h"
#include "tests/amxemu/test_util.h"
#include "tests/common/rng.h"

#include <sys/mman.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <vector>

using amxemu_test::bf16;
using amxemu_test::bits;
using amxemu_test::expect_abort;
using amxemu_test::from_bits;
using amxemu_test::TileCfg;

namespace {

uint8_t g_tile[16][64];

void peek(int t) { amxemu_tile_bytes(t, g_tile); }

// Runs one TDPBF16PS on a 1 x 1 output: tmm0 (1 x 4 bytes) += tmm1 (1 x 4*kp) . tmm2 (kp x 4).
// a[2k+j] pairs with b[2k+j]: even products go to one chain, odd ones to the other.
float dot_1x1(float dest, const float* a, const float* b, int kp) {
    TileCfg cfg;
    cfg.tile(0, 1, 4).tile(1, 1, 4 * kp).tile(2, kp, 4);
    tile_loadconfig(&cfg);
    uint16_t arow[32] = {}, brows[16][2] = {};
    for (int k = 0; k < kp; ++k) {
        arow[2 * k] = bf16(a[2 * k]);
        arow[2 * k + 1] = bf16(a[2 * k + 1]);
        brows[k][0] = bf16(b[2 * k]);
        brows[k][1] = bf16(b[2 * k + 1]);
    }
    tile_loadd(0, &dest, 4);
    tile_loadd(1, arow, 64);
    tile_loadd(2, brows, 4);
    _tile_dpbf16ps(0, 1, 2);
    float out = -1;
    _tile_stored(0, &out, 4);
    _tile_release();
    return out;
}

void tdp_small_integers_full_and_partial(void** /*state*/) {
    // Shapes: full (16 x 16 pairs x 16) and partial (3 x 5 pairs x 7); integers keep every
    // order exact, so the result is the plain dot product.
    const int shapes[2][3] = {{16, 16, 16}, {3, 5, 7}};
    for (const auto& s : shapes) {
        const int M = s[0], KP = s[1], N = s[2];
        uint16_t a[16][32] = {}, b[16][32] = {};
        float c[16][16] = {}, expect[16][16] = {};
        for (int m = 0; m < M; ++m)
            for (int j = 0; j < 2 * KP; ++j) a[m][j] = bf16(float((m * 7 + j * 3) % 17 - 8));
        for (int k = 0; k < KP; ++k)
            for (int j = 0; j < 2 * N; ++j) b[k][j] = bf16(float((k * 5 + j * 11) % 13 - 6));
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                c[m][n] = float(m - n);
                double acc = c[m][n];
                for (int k = 0; k < KP; ++k)
                    for (int j = 0; j < 2; ++j)
                        acc += double(from_bits(uint32_t(a[m][2 * k + j]) << 16)) *
                               double(from_bits(uint32_t(b[k][2 * n + j]) << 16));
                expect[m][n] = float(acc);
            }
        TileCfg cfg;
        cfg.tile(0, M, 4 * N).tile(1, M, 4 * KP).tile(2, KP, 4 * N);
        tile_loadconfig(&cfg);
        tile_loadd(0, c, sizeof(c[0]));
        tile_loadd(1, a, sizeof(a[0]));
        tile_loadd(2, b, sizeof(b[0]));
        _tile_dpbf16ps(0, 1, 2);
        float out[16][16];
        std::memset(out, 0x7f, sizeof(out));
        _tile_stored(0, out, sizeof(out[0]));
        for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 16; ++n) {
                if (m < M && n < N) {
                    assert_int_equal(bits(out[m][n]), bits(expect[m][n]));
                } else {
                    assert_int_equal(bits(out[m][n]), 0x7f7f7f7fu);  // never written
                }
            }
        peek(0);
        for (int m = 0; m < 16; ++m)
            for (int byte = 0; byte < 64; ++byte)
                if (m >= M || byte >= 4 * N) assert_int_equal(g_tile[m][byte], 0);
        _tile_release();
    }
}

void tdp_two_chains_then_dest(void** /*state*/) {
    const float u = std::ldexp(1.0f, -24);  // half an ulp of 1.0
    // Even and odd products are summed first (2^-23), then added to dest: 1 + 2^-23. One
    // sequential chain into dest would round twice to 1.0.
    {
        const float a[2] = {u, u}, b[2] = {1, 1};
        assert_int_equal(bits(dot_1x1(1.0f, a, b, 1)), bits(1.0f + 2 * u));
    }
    // Along K each chain rounds after every step: 1, +2^-24 (tie, stays 1), +2^-24 (again).
    {
        const float a[6] = {1, 0, u, 0, u, 0}, b[6] = {1, 0, 1, 0, 1, 0};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 3)), bits(1.0f));
    }
    // Tie to even upwards: 1 + 2^-23 (odd) + 2^-24 -> 1 + 2^-22. Same for the odd chain.
    {
        const float a[6] = {0, 1, 0, 2 * u, 0, u}, b[6] = {0, 1, 0, 1, 0, 1};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 3)), bits(1.0f + 4 * u));
    }
    // A product is exact before its single rounding: (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14.
    {
        const float h = 1.0f + std::ldexp(1.0f, -7);
        const float a[2] = {h, 0}, b[2] = {h, 0};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 1)),
                         bits(1.0f + std::ldexp(1.0f, -6) + std::ldexp(1.0f, -14)));
    }
}

void tdp_denormals(void** /*state*/) {
    // bf16 denormal input (2^-133) is zero: 2^-133 * 2^100 gives 0, not 2^-33.
    {
        TileCfg cfg;
        cfg.tile(0, 1, 4).tile(1, 1, 4).tile(2, 1, 4);
        tile_loadconfig(&cfg);
        const uint16_t arow[2] = {0x0001, 0x8001};
        const uint16_t brow[2] = {bf16(std::ldexp(1.0f, 100)), bf16(std::ldexp(1.0f, 100))};
        float dest = 0, out = -1;
        tile_loadd(0, &dest, 4);
        tile_loadd(1, arow, 4);
        tile_loadd(2, brow, 4);
        _tile_dpbf16ps(0, 1, 2);
        _tile_stored(0, &out, 4);
        assert_int_equal(bits(out), 0);
        _tile_release();
    }
    const float p63 = std::ldexp(1.0f, -63);
    // An FP32 denormal already in dest is zero: 2^-140 + FLT_MIN gives FLT_MIN exactly.
    {
        const float a[2] = {p63, 0}, b[2] = {p63, 0};
        assert_int_equal(bits(dot_1x1(std::ldexp(1.0f, -140), a, b, 1)), bits(FLT_MIN));
    }
    // Denormal products are flushed: 2^-130 -> 0 (in the even chain; the odd chain is +0, so
    // the chain sum is +0 whatever the sign of the flushed value).
    {
        const float q = std::ldexp(1.0f, -65);
        const float a[2] = {q, 0}, b[2] = {q, 0};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 1)), 0u);
        const float an[2] = {-q, 0};
        assert_int_equal(bits(dot_1x1(0.0f, an, b, 1)), 0u);
    }
    // The chain sum is flushed too, keeping its sign: +-(1.5 FLT_MIN - FLT_MIN) -> +-0; with
    // dest -0 the sign survives the final add.
    {
        const float a[2] = {1.5f * p63, -p63}, b[2] = {p63, p63};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 1)), 0u);
        const float an[2] = {-1.5f * p63, p63};
        assert_int_equal(bits(dot_1x1(-0.0f, an, b, 1)), 0x80000000u);
    }
    // Tininess after rounding: FLT_MIN - 2^-150 rounds (24 bits, unbounded exponent) to
    // itself, below FLT_MIN: flushed; FLT_MIN - 2^-152 rounds up to FLT_MIN: kept.
    {
        const float e75 = std::ldexp(1.0f, -75), e76 = std::ldexp(1.0f, -76);
        const float a[4] = {p63, 0, -e75, 0}, b[4] = {p63, 0, e75, 0};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 2)), 0u);
        const float a2[4] = {p63, 0, -e76, 0}, b2[4] = {p63, 0, e76, 0};
        assert_int_equal(bits(dot_1x1(0.0f, a2, b2, 2)), bits(FLT_MIN));
    }
}

void tdp_overflow_to_inf(void** /*state*/) {
    const float big = std::ldexp(1.0f, 127);
    {
        const float a[2] = {big, 0}, b[2] = {4, 0};
        assert_true(std::isinf(dot_1x1(0.0f, a, b, 1)) && dot_1x1(0.0f, a, b, 1) > 0);
    }
    {
        // Each chain holds 1.5 * 2^127; their sum overflows.
        const float a[2] = {1.5f * big, 1.5f * big}, b[2] = {1, 1};
        assert_int_equal(bits(dot_1x1(0.0f, a, b, 1)), 0x7f800000u);
        const float an[2] = {-1.5f * big, -1.5f * big};
        assert_int_equal(bits(dot_1x1(0.0f, an, b, 1)), 0xff800000u);
    }
    {
        // dest near FLT_MAX plus a normal product overflows in the final add.
        const float a[2] = {big, 0}, b[2] = {1, 0};
        assert_int_equal(bits(dot_1x1(FLT_MAX, a, b, 1)), 0x7f800000u);
    }
}

// The harness's two TDPBF16PS paths (amxemu_bf16.h), the AVX2 one against the scalar
// definition, bit for bit, on random shapes and values: bf16 operands from every class (signed
// zeros, denormals, which DAZ makes zero, and in one case of ten infinities and NaNs) and
// magnitudes whose products and chains land on FLT_MIN or near it (flushes, and tininess
// after rounding: 2^-63 * 2^-63 and 2^-150 products) or overflow; FP32 dest from the same
// classes. (A direct comparison of the two functions on 800,000 such cases found no
// difference; about 1 in 8 chain steps there ended at magnitude FLT_MIN.)
uint16_t random_bf16(amxblas::test::Rng& r, bool special) {
    const uint16_t sign = r.chance(0.5) ? 0x8000 : 0;
    const uint16_t mantissa = uint16_t(r.below(128));
    if (special && r.chance(0.05)) return uint16_t(sign | 0x7f80 | (r.chance(0.5) ? mantissa : 0));  // Inf, NaN
    switch (r.below(8)) {
        case 0: return sign;                                                                    // +-0
        case 1: return uint16_t(sign | (mantissa ? mantissa : 1));                              // denormal
        case 2: return uint16_t(sign | (uint16_t(127 - 63) << 7));                              // 2^-63
        case 3: return uint16_t(sign | (uint16_t(127 - 64 + r.below(3)) << 7) | mantissa);      // near it
        case 4: return uint16_t(sign | (uint16_t(127 - 76 + r.below(2)) << 7) | (mantissa & 3));  // 2^-75
        case 5: return uint16_t(sign | (uint16_t(127 + 62 + r.below(3)) << 7) | mantissa);      // overflow
        default: return uint16_t(sign | (uint16_t(127 - 4 + r.below(9)) << 7) | mantissa);
    }
}

uint32_t random_fp32(amxblas::test::Rng& r) {
    const uint32_t sign = r.chance(0.5) ? 0x80000000u : 0;
    const uint32_t mantissa = uint32_t(r.next() >> 41);
    switch (r.below(6)) {
        case 0: return sign;
        case 1: return sign | (mantissa ? mantissa : 1);               // denormal
        case 2: return sign | (1u << 23) | (mantissa & 0xff);          // FLT_MIN and just above
        case 3: return sign | (uint32_t(254) << 23) | mantissa;        // near FLT_MAX
        default: return sign | (uint32_t(127 - 2 + r.below(5)) << 23) | mantissa;
    }
}

void tdp_vector_path_equals_definition(void** /*state*/) {
    if (!amxemu_use_vector_arithmetic(1)) {
        print_message("no AVX2 and FMA here: the harness runs the scalar definition only\n");
        skip();
    }
    amxblas::test::Rng r(47);
    for (int c = 0; c < 1500; ++c) {
        const bool full = c % 3 == 0;
        const int M = full ? 16 : 1 + r.below(16), KP = full ? 16 : 1 + r.below(16), N = full ? 16 : 1 + r.below(16);
        const bool special = c % 10 == 0;
        uint16_t a[16][32] = {}, b[16][32] = {};
        uint32_t d[16][16] = {};
        for (int m = 0; m < M; ++m)
            for (int j = 0; j < 2 * KP; ++j) a[m][j] = random_bf16(r, special);
        for (int k = 0; k < KP; ++k)
            for (int j = 0; j < 2 * N; ++j) b[k][j] = random_bf16(r, special);
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) d[m][n] = random_fp32(r);
        uint32_t out[2][16][16];
        for (int vector = 0; vector < 2; ++vector) {
            assert_int_equal(amxemu_use_vector_arithmetic(vector), vector);
            TileCfg cfg;
            cfg.tile(0, M, 4 * N).tile(1, M, 4 * KP).tile(2, KP, 4 * N);
            tile_loadconfig(&cfg);
            tile_loadd(0, d, sizeof(d[0]));
            tile_loadd(1, a, sizeof(a[0]));
            tile_loadd(2, b, sizeof(b[0]));
            _tile_dpbf16ps(0, 1, 2);
            std::memset(out[vector], 0, sizeof(out[vector]));
            _tile_stored(0, out[vector], sizeof(out[vector][0]));
            _tile_release();
        }
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n)
                if (out[0][m][n] != out[1][m][n])
                    fail_msg("case %d (%d x %d pairs x %d): C(%d,%d) scalar 0x%08x, vector 0x%08x", c, M, KP, N, m, n,
                             out[0][m][n], out[1][m][n]);
    }
    amxemu_use_vector_arithmetic(1);
}

// The hand-computed TDPBF16PS cases on the scalar definition too (the group runs them on the
// vector path, the default where the CPU has AVX2 and FMA).
void tdp_cases_on_the_scalar_definition(void** state) {
    amxemu_use_vector_arithmetic(0);
    tdp_small_integers_full_and_partial(state);
    tdp_two_chains_then_dest(state);
    tdp_denormals(state);
    tdp_overflow_to_inf(state);
    amxemu_use_vector_arithmetic(1);
}

void load_store_odd_strides_partial(void** /*state*/) {
    // tmm2: 5 rows x 20 bytes, loaded with stride 67 and stored with stride 131.
    std::vector<uint8_t> src(67 * 16 + 64), dst(131 * 16 + 64, 0xaa);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 29 + 1);
    TileCfg cfg;
    cfg.tile(2, 5, 20);
    tile_loadconfig(&cfg);
    tile_loadd(2, src.data() + 3, 67);
    _tile_stored(2, dst.data() + 1, 131);
    for (size_t i = 0; i < dst.size(); ++i) {
        const long off = long(i) - 1;
        const long r = off / 131, c = off % 131;
        if (off >= 0 && r < 5 && c < 20) {
            assert_int_equal(dst[i], src[3 + r * 67 + c]);
        } else {
            assert_int_equal(dst[i], 0xaa);
        }
    }
    // Bytes beyond colsb and rows beyond rows are zero in the tile.
    peek(2);
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 64; ++c) {
            if (r < 5 && c < 20) {
                assert_int_equal(g_tile[r][c], src[3 + r * 67 + c]);
            } else {
                assert_int_equal(g_tile[r][c], 0);
            }
        }
    // Negative stride: rows go downwards in memory.
    tile_loadd(2, src.data() + 67 * 10, -67);
    peek(2);
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 20; ++c) assert_int_equal(g_tile[r][c], src[67 * (10 - r) + c]);
    _tile_release();
}

void start_row_and_sttilecfg_round_trip(void** /*state*/) {
    TileCfg none;
    _tile_release();
    tile_storeconfig(&none);
    const TileCfg zeros = [] {
        TileCfg z;
        z.palette = 0;
        return z;
    }();
    assert_memory_equal(&none, &zeros, 64);

    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 1, 4).tile(3, 7, 36).tile(7, 16, 2);
    cfg.start_row = 3;
    tile_loadconfig(&cfg);
    TileCfg back;
    back.palette = 0xee;
    tile_storeconfig(&back);
    assert_memory_equal(&back, &cfg, 64);

    // TILELOADD starts at start_row (rows below stay zero from LDTILECFG) and clears it.
    uint8_t src[7][36];
    for (int r = 0; r < 7; ++r)
        for (int c = 0; c < 36; ++c) src[r][c] = uint8_t(1 + r * 36 + c);
    tile_loadd(3, src, 36);
    peek(3);
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 64; ++c)
            assert_int_equal(g_tile[r][c], (r >= 3 && r < 7 && c < 36) ? src[r][c] : 0);
    tile_storeconfig(&back);
    assert_int_equal(back.start_row, 0);

    // Palette 0 is the INIT state: configuration and data are cleared.
    TileCfg init;
    init.palette = 0;
    tile_loadconfig(&init);
    tile_storeconfig(&back);
    assert_memory_equal(&back, &zeros, 64);
}

void tilezero_clears_whole_tile(void** /*state*/) {
    TileCfg cfg;
    cfg.tile(4, 16, 64).tile(5, 16, 64);
    tile_loadconfig(&cfg);
    uint8_t src[16][64];
    std::memset(src, 0x5a, sizeof(src));
    tile_loadd(4, src, 64);
    tile_loadd(5, src, 64);
    _tile_zero(4);
    uint8_t out[16][64];
    _tile_stored(4, out, 64);
    uint8_t zero[16][64] = {};
    assert_memory_equal(out, zero, sizeof(out));
    peek(4);
    assert_memory_equal(g_tile, zero, sizeof(zero));
    peek(5);
    assert_memory_equal(g_tile, src, sizeof(src));  // other tiles untouched
    _tile_release();
}

void counters_count_each_kind(void** /*state*/) {
    amxemu_reset_counters();
    TileCfg cfg, back;
    cfg.tile(0, 16, 64).tile(1, 16, 64).tile(2, 16, 64);
    uint8_t buf[16][64] = {};
    tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(0);
    tile_loadd(1, buf, 64);
    tile_stream_loadd(2, buf, 64);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, buf, 64);
    tile_storeconfig(&back);
    _tile_release();
    amxemu_counts c;
    amxemu_counters(&c);
    assert_int_equal(c.ldtilecfg, 1);
    assert_int_equal(c.sttilecfg, 1);
    assert_int_equal(c.tilerelease, 1);
    assert_int_equal(c.tilezero, 2);
    assert_int_equal(c.tileloadd, 1);
    assert_int_equal(c.tileloaddt1, 1);
    assert_int_equal(c.tilestored, 1);
    assert_int_equal(c.tdpbf16ps, 1);
    assert_int_equal(amxemu_harness_version(), 1);
}

// One trap runs the emulated instructions that directly follow the trapping one (amxemu.cc,
// on_sigill): three back-to-back TILEZEROs take one trap, two with a NOP between them two
// (aligned, so that no page boundary stops the look ahead); and an encoding the hardware
// rejects right after a valid instruction still aborts with its message.
void back_to_back_zeros_then_bad_encoding() {
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    // TILEZERO tmm0 (C4 E2 7B 49 C0), then the same with VEX.W = 1 (7B -> FB).
    __asm__ volatile("tilezero %%tmm0\n\t.byte 0xc4, 0xe2, 0xfb, 0x49, 0xc0" ::: "memory");
}

void back_to_back_instructions_share_a_trap(void** /*state*/) {
    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 16, 64).tile(2, 16, 64);
    tile_loadconfig(&cfg);
    amxemu_counts c;
    amxemu_reset_counters();
    __asm__ volatile(".p2align 5\n\ttilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2" ::: "memory");
    amxemu_counters(&c);
    assert_int_equal(c.tilezero, 3);
    assert_int_equal(c.traps, 1);
    amxemu_reset_counters();
    __asm__ volatile(".p2align 5\n\ttilezero %%tmm0\n\tnop\n\ttilezero %%tmm1" ::: "memory");
    amxemu_counters(&c);
    assert_int_equal(c.tilezero, 2);
    assert_int_equal(c.traps, 2);
    _tile_release();
    expect_abort(back_to_back_zeros_then_bad_encoding, "#UD: TILEZERO at 0x");
    expect_abort(back_to_back_zeros_then_bad_encoding, "VEX.W must be 0");
}

// The look ahead stops where the next instruction's 15 bytes would leave the page of the one
// just run (amxemu_decode.h, fetchable_after): two TILEZEROs and a RET at the very end of an
// executable page, the page after it inaccessible, take two traps. (Without the guard the
// second TILEZERO, which lies in the first page, would be run in the first trap: one.)
void look_ahead_stops_before_a_page_end(void** /*state*/) {
    const long kPage = sysconf(_SC_PAGESIZE);
    void* two = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(two != MAP_FAILED);
    uint8_t* page = static_cast<uint8_t*>(two);
    const uint8_t code[] = {0xc4, 0xe2, 0x7b, 0x49, 0xc0,   // tilezero tmm0
                            0xc4, 0xe2, 0x7b, 0x49, 0xc8,   // tilezero tmm1
                            0xc3};                          // ret
    uint8_t* entry = page + kPage - sizeof(code);
    std::memcpy(entry, code, sizeof(code));
    assert_int_equal(mprotect(page, kPage, PROT_READ | PROT_EXEC), 0);
    assert_int_equal(mprotect(page + kPage, kPage, PROT_NONE), 0);
    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 16, 64);
    tile_loadconfig(&cfg);
    amxemu_counts c;
    amxemu_reset_counters();
    reinterpret_cast<void (*)()>(entry)();
    amxemu_counters(&c);
    _tile_release();
    munmap(two, 2 * kPage);
    assert_int_equal(c.tilezero, 2);
    assert_int_equal(c.traps, 2);
}

// ---- violations: each must abort with a message naming the instruction, tiles and shapes.
void use_after_release() {
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    _tile_release();
    _tile_zero(0);
}

void shape_k_mismatch() {
    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 16, 64).tile(2, 8, 64);
    tile_loadconfig(&cfg);
    _tile_dpbf16ps(0, 1, 2);
}

void shape_m_mismatch() {
    TileCfg cfg;
    cfg.tile(3, 16, 64).tile(4, 12, 64).tile(5, 16, 64);
    tile_loadconfig(&cfg);
    _tile_dpbf16ps(3, 4, 5);
}

void shape_n_mismatch() {
    TileCfg cfg;
    cfg.tile(0, 16, 32).tile(6, 16, 64).tile(7, 16, 64);
    tile_loadconfig(&cfg);
    _tile_dpbf16ps(0, 6, 7);
}

void shape_colsb_not_dword() {
    TileCfg cfg;
    cfg.tile(0, 4, 6).tile(1, 4, 64).tile(2, 16, 6);
    tile_loadconfig(&cfg);
    _tile_dpbf16ps(0, 1, 2);
}

void operands_not_distinct() {
    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 16, 64);
    tile_loadconfig(&cfg);
    // tdpbf16ps %tmm1, %tmm0, %tmm0, which the assembler refuses: C4 E2 72 5C C0.
    __asm__ volatile(".byte 0xc4, 0xe2, 0x72, 0x5c, 0xc0" ::: "memory");
}

void unconfigured_tile() {
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    static uint8_t buf[16][64];
    tile_loadd(3, buf, 64);
}

void palette_2() {
    TileCfg cfg;
    cfg.palette = 2;
    tile_loadconfig(&cfg);
}

void rows_17() {
    TileCfg cfg;
    cfg.tile(1, 17, 64);
    tile_loadconfig(&cfg);
}

void colsb_65() {
    TileCfg cfg;
    cfg.tile(1, 16, 65);
    tile_loadconfig(&cfg);
}

void reserved_nonzero() {
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    cfg.reserved[5] = 1;
    tile_loadconfig(&cfg);
}

void rows_without_colsb() {
    TileCfg cfg;
    cfg.tile(2, 4, 0);
    tile_loadconfig(&cfg);
}

void start_row_beyond_rows() {
    TileCfg cfg;
    cfg.tile(0, 4, 64);
    cfg.start_row = 4;
    tile_loadconfig(&cfg);
    static uint8_t buf[16][64];
    tile_loadd(0, buf, 64);
}

// Bad memory operands: a page that is not mapped (the second of two, unmapped again) and a
// read-only page, set up by the parent so the child's addresses are known to it.
uint8_t* g_mapped = nullptr;    // 2 pages: [0, 4096) read-write, [4096, 8192) unmapped
uint8_t* g_readonly = nullptr;  // 1 page, PROT_READ
constexpr int kPage = 4096;

void load_runs_into_unmapped_page() {
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    tile_loadd(0, g_mapped + kPage - 3 * 64, 64);  // rows 0-2 mapped, row 3 not
}

void store_to_readonly_page() {
    TileCfg cfg;
    cfg.tile(5, 4, 32);
    tile_loadconfig(&cfg);
    _tile_zero(5);
    _tile_stored(5, g_readonly, 128);
}

void ldtilecfg_from_unmapped_page() { tile_loadconfig(g_mapped + kPage); }

std::string hex(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(p)));
    return buf;
}

void bad_addresses_abort_with_message(void** /*state*/) {
    // The read-only page first: mapped after the hole, it could land in it.
    void* ro = mmap(nullptr, kPage, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(ro != MAP_FAILED);
    g_readonly = static_cast<uint8_t*>(ro);
    void* two = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(two != MAP_FAILED);
    g_mapped = static_cast<uint8_t*>(two);
    assert_int_equal(munmap(g_mapped + kPage, kPage), 0);

    const std::string row3 = "amxemu: #PF: TILELOADD tmm0 at 0x";
    const std::string load = expect_abort(load_runs_into_unmapped_page, row3.c_str());
    const std::string want_load = ": row 3 memory " + hex(g_mapped + kPage) + ".." + hex(g_mapped + kPage + 63) +
                                  " is not readable (base " + hex(g_mapped + kPage - 3 * 64) +
                                  ", stride 64); shapes rows x colsb: tmm0 16x64";
    if (load.find(want_load) == std::string::npos) fail_msg("wanted \"%s\" in:\n%s", want_load.c_str(), load.c_str());

    const std::string want_store = "amxemu: #PF: TILESTORED tmm5 at 0x";
    const std::string store = expect_abort(store_to_readonly_page, want_store.c_str());
    const std::string want_row0 = ": row 0 memory " + hex(g_readonly) + ".." + hex(g_readonly + 31) +
                                  " is not writable (base " + hex(g_readonly) + ", stride 128); shapes rows x colsb: tmm5 4x32";
    if (store.find(want_row0) == std::string::npos) fail_msg("wanted \"%s\" in:\n%s", want_row0.c_str(), store.c_str());

    const std::string want_cfg = ": memory " + hex(g_mapped + kPage) + ".." + hex(g_mapped + kPage + 63) + " is not readable";
    const std::string cfg = expect_abort(ldtilecfg_from_unmapped_page, "amxemu: #PF: LDTILECFG at 0x");
    if (cfg.find(want_cfg) == std::string::npos) fail_msg("wanted \"%s\" in:\n%s", want_cfg.c_str(), cfg.c_str());

    // The page before the hole was only read: its contents are what mmap gave.
    for (int i = 0; i < kPage; ++i) assert_int_equal(g_mapped[i], 0);
    munmap(g_mapped, kPage);
    munmap(g_readonly, kPage);
}

void violations_abort_with_message(void** /*state*/) {
    expect_abort(use_after_release,
                 "amxemu: #UD: TILEZERO tmm0 at 0x");
    expect_abort(use_after_release, "TILES_CONFIGURED == 0");
    const std::string k = expect_abort(shape_k_mismatch, "src1.colsb / 4 != src2.rows (16 != 8)");
    assert_true(k.find("TDPBF16PS tmm0, tmm1, tmm2") != std::string::npos);
    assert_true(k.find("tmm0 16x64, tmm1 16x64, tmm2 8x64") != std::string::npos);
    expect_abort(shape_m_mismatch, "srcdest.rows != src1.rows (16 != 12)");
    expect_abort(shape_n_mismatch, "srcdest.colsb != src2.colsb (32 != 64)");
    expect_abort(shape_colsb_not_dword, "srcdest.colsb % 4 != 0");
    expect_abort(operands_not_distinct, "tile operands must be distinct");
    expect_abort(unconfigured_tile, "TILELOADD tmm3 at 0x");
    expect_abort(unconfigured_tile, "tile not configured (rows == 0); shapes rows x colsb: tmm3 0x0");
    expect_abort(palette_2, "#GP: LDTILECFG at 0x");
    expect_abort(palette_2, "palette not supported (2 != 1)");
    expect_abort(rows_17, "rows > 16 for tile (1: 17)");
    expect_abort(colsb_65, "colsb > 64 for tile (1: 65)");
    expect_abort(reserved_nonzero, "reserved byte nonzero (7 = 1)");
    expect_abort(rows_without_colsb, "both be zero or both nonzero for tile (2: rows 4)");
    expect_abort(start_row_beyond_rows, "start_row >= rows (4 >= 4)");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tdp_small_integers_full_and_partial),
        cmocka_unit_test(tdp_two_chains_then_dest),
        cmocka_unit_test(tdp_denormals),
        cmocka_unit_test(tdp_overflow_to_inf),
        cmocka_unit_test(tdp_cases_on_the_scalar_definition),
        cmocka_unit_test(tdp_vector_path_equals_definition),
        cmocka_unit_test(load_store_odd_strides_partial),
        cmocka_unit_test(start_row_and_sttilecfg_round_trip),
        cmocka_unit_test(tilezero_clears_whole_tile),
        cmocka_unit_test(counters_count_each_kind),
        cmocka_unit_test(back_to_back_instructions_share_a_trap),
        cmocka_unit_test(look_ahead_stops_before_a_page_end),
        cmocka_unit_test(violations_abort_with_message),
        cmocka_unit_test(bad_addresses_abort_with_message),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

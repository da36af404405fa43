// The emulator's AMX-INT8 dot products (TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD) alone: the
// intrinsics in this file (built with -mamx-tile -mamx-int8) trap, and every result is checked
// against a scalar model of the SDM's Operation written here, in 64-bit integers and wrapped to
// 32 bits at the end (the hardware's INT32 sums wrap; they never saturate).
#include <immintrin.h>

#include "amxemu/amxemu.h"
#include "tests/amxemu/test_util.h"
#include "tests/common/rng.h"

#include <cstdio>
#include <string>

using amxemu_test::expect_abort;
using amxemu_test::TileCfg;

namespace {

enum Form { kSS, kSU, kUS, kUU };  // signedness of (src1, src2) bytes
const char* const kFormName[4] = {"TDPBSSD", "TDPBSUD", "TDPBUSD", "TDPBUUD"};

// The intrinsics take tile numbers as literals: tmm0 += tmm1 . tmm2 in the given form.
void dot_012(Form f) {
    switch (f) {
        case kSS: _tile_dpbssd(0, 1, 2); break;
        case kSU: _tile_dpbsud(0, 1, 2); break;
        case kUS: _tile_dpbusd(0, 1, 2); break;
        case kUU: _tile_dpbuud(0, 1, 2); break;
    }
}

int64_t byte_value(uint8_t b, bool is_signed) { return is_signed ? int64_t(int8_t(b)) : int64_t(b); }

// The SDM's result for dest[m][n]: dest + sum over K quads and their 4 bytes, modulo 2^32.
uint32_t model(Form f, uint32_t dest, const uint8_t a[16][64], const uint8_t b[16][64], int m, int n, int kq) {
    const bool s1 = f == kSS || f == kSU, s2 = f == kSS || f == kUS;
    int64_t acc = int64_t(int32_t(dest));
    for (int k = 0; k < kq; ++k)
        for (int j = 0; j < 4; ++j) acc += byte_value(a[m][4 * k + j], s1) * byte_value(b[k][4 * n + j], s2);
    return uint32_t(uint64_t(acc));
}

// tmm0 (M x 4N bytes) := tmm0 + tmm1 (M x 4KQ) . tmm2 (KQ x 4N) in form f, from c, a and b;
// returns tmm0 as stored, and checks that the tile is zero outside its M x N dwords.
void run_dot(Form f, int M, int KQ, int N, const uint32_t c[16][16], const uint8_t a[16][64], const uint8_t b[16][64],
             uint32_t out[16][16]) {
    TileCfg cfg;
    cfg.tile(0, M, 4 * N).tile(1, M, 4 * KQ).tile(2, KQ, 4 * N);
    tile_loadconfig(&cfg);
    tile_loadd(0, c, 64);
    tile_loadd(1, a, 64);
    tile_loadd(2, b, 64);
    dot_012(f);
    std::memset(out, 0x7f, 16 * 16 * sizeof(uint32_t));
    _tile_stored(0, out, 64);
    AMXEMU_FENCE();
    uint8_t tile[16][64];
    amxemu_tile_bytes(0, tile);
    for (int m = 0; m < 16; ++m)
        for (int byte = 0; byte < 64; ++byte)
            if (m >= M || byte >= 4 * N) assert_int_equal(tile[m][byte], 0);
    _tile_release();
}

// Random bytes with the extremes -128, 127 (0x80, 0x7f), 0 and 255 (0xff) one time in four.
uint8_t random_byte(amxt_rng* r) {
    static const uint8_t kEdges[4] = {0x80, 0x7f, 0x00, 0xff};
    const uint64_t s = amxt_rng_next(r);
    return (s >> 60) < 4 ? kEdges[(s >> 56) & 3] : uint8_t(s >> 40);
}

void each_form_matches_scalar_model(void** /*state*/) {
    // Full tiles (16 x 16 quads x 16), a partial shape and a one-quad one.
    const int shapes[3][3] = {{16, 16, 16}, {3, 5, 7}, {16, 1, 2}};
    amxt_rng rng = amxt_rng_seeded(24);
    for (int f = kSS; f <= kUU; ++f)
        for (const auto& s : shapes)
            for (int rep = 0; rep < 4; ++rep) {
                const int M = s[0], KQ = s[1], N = s[2];
                uint8_t a[16][64] = {}, b[16][64] = {};
                uint32_t c[16][16] = {}, out[16][16];
                for (int m = 0; m < M; ++m)
                    for (int j = 0; j < 4 * KQ; ++j) a[m][j] = random_byte(&rng);
                for (int k = 0; k < KQ; ++k)
                    for (int j = 0; j < 4 * N; ++j) b[k][j] = random_byte(&rng);
                for (int m = 0; m < M; ++m)
                    for (int n = 0; n < N; ++n) c[m][n] = uint32_t(amxt_rng_next(&rng) >> 32);
                run_dot(Form(f), M, KQ, N, c, a, b, out);
                for (int m = 0; m < 16; ++m)
                    for (int n = 0; n < 16; ++n) {
                        const uint32_t want = (m < M && n < N) ? model(Form(f), c[m][n], a, b, m, n, KQ) : 0x7f7f7f7fu;
                        if (out[m][n] != want)
                            fail_msg("%s %dx%dx%d [%d][%d]: got 0x%08x, model 0x%08x", kFormName[f], M, KQ, N, m, n,
                                     out[m][n], want);
                    }
            }
}

// One quad of bytes 0x80 (src1) times 0xff (src2): the four forms read the same bits as four
// different products, (-128)(-1), (-128)(255), (128)(-1), (128)(255), each times 4.
void signedness_of_each_operand(void** /*state*/) {
    const int32_t want[4] = {4 * 128, 4 * -32640, 4 * -128, 4 * 32640};
    for (int f = kSS; f <= kUU; ++f) {
        uint8_t a[16][64] = {}, b[16][64] = {};
        uint32_t c[16][16] = {}, out[16][16];
        std::memset(a[0], 0x80, 4);
        std::memset(b[0], 0xff, 4);
        run_dot(Form(f), 1, 1, 1, c, a, b, out);
        assert_int_equal(int32_t(out[0][0]), want[f]);
    }
}

// The INT32 sum wraps modulo 2^32 in both directions; saturation would give INT32_MAX/MIN.
void sums_wrap_without_saturation(void** /*state*/) {
    // 16 quads of 255 x 255 onto INT32_MAX: 0x7fffffff + 4161600 wraps to a negative value.
    {
        uint8_t a[16][64], b[16][64];
        std::memset(a, 0xff, sizeof(a));
        std::memset(b, 0xff, sizeof(b));
        uint32_t c[16][16] = {}, out[16][16];
        c[0][0] = 0x7fffffffu;
        run_dot(kUU, 1, 16, 1, c, a, b, out);
        assert_int_equal(out[0][0], 0x7fffffffu + 16u * 4u * 65025u);
        assert_true(int32_t(out[0][0]) < 0);
    }
    // 16 quads of (-128) x 127 onto INT32_MIN: wraps to a large positive value.
    {
        uint8_t a[16][64], b[16][64];
        std::memset(a, 0x80, sizeof(a));
        std::memset(b, 0x7f, sizeof(b));
        uint32_t c[16][16] = {}, out[16][16];
        c[0][0] = 0x80000000u;
        run_dot(kSS, 1, 16, 1, c, a, b, out);
        assert_int_equal(out[0][0], 0x80000000u - 16u * 4u * 16256u);
        assert_true(int32_t(out[0][0]) > 0);
    }
    // The most negative single-instruction sum of TDPBSUD, (-128) x 255 over 64 bytes, from 0:
    // exact (no wrap), -2088960.
    {
        uint8_t a[16][64], b[16][64];
        std::memset(a, 0x80, sizeof(a));
        std::memset(b, 0xff, sizeof(b));
        uint32_t c[16][16] = {}, out[16][16];
        run_dot(kSU, 16, 16, 16, c, a, b, out);
        for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 16; ++n) assert_int_equal(int32_t(out[m][n]), -2088960);
    }
}

void counters_count_each_form(void** /*state*/) {
    amxemu_reset_counters();
    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 16, 64).tile(2, 16, 64);
    tile_loadconfig(&cfg);
    _tile_dpbssd(0, 1, 2);
    _tile_dpbsud(0, 1, 2);
    _tile_dpbsud(0, 1, 2);
    _tile_dpbusd(0, 1, 2);
    _tile_dpbusd(0, 1, 2);
    _tile_dpbusd(0, 1, 2);
    _tile_dpbuud(0, 1, 2);
    _tile_dpbuud(0, 1, 2);
    _tile_dpbuud(0, 1, 2);
    _tile_dpbuud(0, 1, 2);
    _tile_release();
    amxemu_counts c;
    amxemu_counters(&c);
    assert_int_equal(c.tdpbssd, 1);
    assert_int_equal(c.tdpbsud, 2);
    assert_int_equal(c.tdpbusd, 3);
    assert_int_equal(c.tdpbuud, 4);
    assert_int_equal(c.tdpbf16ps, 0);
    assert_int_equal(c.ldtilecfg, 1);
    assert_int_equal(c.tilerelease, 1);
    assert_int_equal(c.passed_on, 0);
}

// ---- violations: the #UD checks TDPBF16PS has, for every form (children that must abort).
Form g_form = kSS;

void configure_and_dot(const TileCfg& cfg) {
    tile_loadconfig(&cfg);
    dot_012(g_form);
}

void shape_k_mismatch() { configure_and_dot(TileCfg().tile(0, 16, 64).tile(1, 16, 64).tile(2, 8, 64)); }
void shape_m_mismatch() { configure_and_dot(TileCfg().tile(0, 16, 64).tile(1, 12, 64).tile(2, 16, 64)); }
void shape_n_mismatch() { configure_and_dot(TileCfg().tile(0, 16, 32).tile(1, 16, 64).tile(2, 16, 64)); }
void colsb_not_dword() { configure_and_dot(TileCfg().tile(0, 4, 6).tile(1, 4, 64).tile(2, 16, 6)); }
void src1_colsb_not_dword() { configure_and_dot(TileCfg().tile(0, 4, 8).tile(1, 4, 62).tile(2, 15, 8)); }
void src2_unconfigured() { configure_and_dot(TileCfg().tile(0, 16, 64).tile(1, 16, 64)); }

void operands_not_distinct() {
    TileCfg cfg;
    cfg.tile(0, 16, 64).tile(1, 16, 64);
    tile_loadconfig(&cfg);
    // tdpbssd with dest = src1 = tmm0, src2 = tmm1, which the assembler refuses:
    // C4 E2 73 5E C0 (VEX.vvvv = ~1110b = tmm1, pp = 11b = F2).
    __asm__ volatile(".byte 0xc4, 0xe2, 0x73, 0x5e, 0xc0" ::: "memory");
}

void violations_abort_with_message(void** /*state*/) {
    for (int f = kSS; f <= kUU; ++f) {
        g_form = Form(f);  // inherited by the forked children
        const std::string k = expect_abort(shape_k_mismatch, "src1.colsb / 4 != src2.rows (16 != 8)");
        const std::string insn = std::string("#UD: ") + kFormName[f] + " tmm0, tmm1, tmm2 at 0x";
        if (k.find(insn) == std::string::npos) fail_msg("wanted \"%s\" in:\n%s", insn.c_str(), k.c_str());
        assert_true(k.find("tmm0 16x64, tmm1 16x64, tmm2 8x64") != std::string::npos);
        expect_abort(shape_m_mismatch, "srcdest.rows != src1.rows (16 != 12)");
        expect_abort(shape_n_mismatch, "srcdest.colsb != src2.colsb (32 != 64)");
        expect_abort(colsb_not_dword, "srcdest.colsb % 4 != 0");
        expect_abort(src1_colsb_not_dword, "src1.colsb % 4 != 0");
        expect_abort(src2_unconfigured, "tile not configured (rows == 0)");
    }
    expect_abort(operands_not_distinct, "TDPBSSD tmm0, tmm0, tmm1 at 0x");
    expect_abort(operands_not_distinct, "tile operands must be distinct");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_form_matches_scalar_model),
        cmocka_unit_test(signedness_of_each_operand),
        cmocka_unit_test(sums_wrap_without_saturation),
        cmocka_unit_test(counters_count_each_form),
        cmocka_unit_test(violations_abort_with_message),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

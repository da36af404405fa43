// Every addressing form the decoder handles, forced with inline assembly: base and index from
// the legacy and the extended registers (VEX.X/VEX.B), scale 1-8, no/8-bit/32-bit displacement,
// no index (stride 0), no base (disp32 only), RSP and R13 as base, RIP-relative LDTILECFG,
// address-size (67) and FS segment prefixes. GCC's own forms (base + stride*1, no displacement;
// ldtilecfg on the stack) are covered by the intrinsics in test_amxemu_semantics.cc.
#include <immintrin.h>
#include <pthread.h>
#include <sys/mman.h>

#include "amxemu/amxemu.h"
#include "tests/amxemu/test_util.h"

#include <vector>

using amxemu_test::TileCfg;

namespace {

constexpr long kStride = 200;  // bytes between rows in memory; a multiple of 8 for scale 8
uint8_t g_src[kStride * 17 + 8192];
uint8_t g_tile[16][64];
TileCfg g_cfg_static;  // read RIP-relative

void configure_full() {
    TileCfg cfg;
    for (int t = 0; t < 8; ++t) cfg.tile(t, 16, 64);
    tile_loadconfig(&cfg);
}

void fill_src() {
    for (size_t i = 0; i < sizeof(g_src); ++i) g_src[i] = uint8_t(i * 131 + 7);
}

// tmm1 must hold 16 rows of 64 bytes from `base + r * stride`.
void expect_tmm1(const uint8_t* base, long stride) {
    amxemu_tile_bytes(1, g_tile);
    for (int r = 0; r < 16; ++r) assert_memory_equal(g_tile[r], base + r * stride, 64);
}

void tileloadd_register_forms(void** /*state*/) {
    fill_src();
    configure_full();
    const uint8_t* row0 = g_src + 512;
    AMXEMU_FENCE();
    {  // rax + rcx*1
        register const uint8_t* b asm("rax") = row0;
        register long i asm("rcx") = kStride;
        __asm__ volatile("tileloadd (%0,%1,1), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(row0, kStride);
    }
    {  // r13 + r12*2 + disp8: R13 as base needs a displacement byte, R12 as index needs VEX.X
        register const uint8_t* b asm("r13") = row0 - 0x40;
        register long i asm("r12") = kStride / 2;
        __asm__ volatile("tileloadd 0x40(%0,%1,2), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(row0, kStride);
    }
    {  // r13 + r9*8, mod=01 with displacement 0
        register const uint8_t* b asm("r13") = row0;
        register long i asm("r9") = kStride / 8;
        __asm__ volatile("tileloadd (%0,%1,8), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(row0, kStride);
    }
    {  // r8 + r15*4 + negative disp32
        register const uint8_t* b asm("r8") = row0 + 0x1000;
        register long i asm("r15") = kStride / 4;
        __asm__ volatile("tileloadd -0x1000(%0,%1,4), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(row0, kStride);
    }
    {  // rbx + rsi*1 + disp32 positive, into a tile from ModRM.reg = 1
        register const uint8_t* b asm("rbx") = row0 - 0x123;
        register long i asm("rsi") = kStride;
        __asm__ volatile("tileloadd 0x123(%0,%1,1), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(row0, kStride);
    }
    {  // r11 + rdi*1, TILELOADDT1, disp8 negative
        register const uint8_t* b asm("r11") = row0 + 8;
        register long i asm("rdi") = kStride;
        __asm__ volatile("tileloaddt1 -8(%0,%1,1), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(row0, kStride);
    }
    {  // no index register: stride 0, every row is the first one
        register const uint8_t* b asm("rdx") = row0;
        __asm__ volatile("tileloadd (%0), %%tmm1" ::"r"(b) : "memory");
        expect_tmm1(row0, 0);
    }
    {  // rsp as base (SIB base 100): point rsp into a scratch stack whose upper half is data
        std::vector<uint8_t> stack(1 << 16);
        uint8_t* top = stack.data() + (1 << 15);
        std::memcpy(top, row0, kStride * 16);
        AMXEMU_FENCE();
        register long i asm("rcx") = kStride;
        __asm__ volatile(
            "mov %%rsp, %%r10\n\t"
            "mov %0, %%rsp\n\t"
            "tileloadd (%%rsp,%1,1), %%tmm1\n\t"
            "mov %%r10, %%rsp" ::"r"(top),
            "r"(i)
            : "r10", "memory");
        expect_tmm1(row0, kStride);
    }
    _tile_release();
}

void tilestored_register_forms(void** /*state*/) {
    fill_src();
    configure_full();
    tile_loadd(1, g_src, kStride);
    std::vector<uint8_t> out(kStride * 17 + 512);
    auto check = [&](long stride, long offset) {
        for (int r = 0; r < 16; ++r) assert_memory_equal(out.data() + offset + r * stride, g_src + r * kStride, 64);
    };
    {  // r14 + r11*1 + disp8 0x7f
        std::fill(out.begin(), out.end(), 0);
        register uint8_t* b asm("r14") = out.data();
        register long i asm("r11") = 100;
        __asm__ volatile("tilestored %%tmm1, 0x7f(%0,%1,1)" ::"r"(b), "r"(i) : "memory");
        check(100, 0x7f);
    }
    {  // rbx + rdx*2 - 0x80
        std::fill(out.begin(), out.end(), 0);
        register uint8_t* b asm("rbx") = out.data() + 0x80;
        register long i asm("rdx") = 40;
        __asm__ volatile("tilestored %%tmm1, -0x80(%0,%1,2)" ::"r"(b), "r"(i) : "memory");
        check(80, 0);
    }
    {  // r12 as base (SIB base 100 with VEX.B) + r10*4 + disp32
        std::fill(out.begin(), out.end(), 0);
        register uint8_t* b asm("r12") = out.data();
        register long i asm("r10") = 16;
        __asm__ volatile("tilestored %%tmm1, 0x100(%0,%1,4)" ::"r"(b), "r"(i) : "memory");
        check(64, 0x100);
    }
    _tile_release();
}

void no_base_and_address_size_forms(void** /*state*/) {
    // A mapping below 2 GiB, so that disp32 alone and 32-bit addressing can reach it.
    void* low = mmap(reinterpret_cast<void*>(0x20000000), 1 << 16, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (low != reinterpret_cast<void*>(0x20000000)) skip();
    uint8_t* base = static_cast<uint8_t*>(low);
    for (int i = 0; i < (1 << 16); ++i) base[i] = uint8_t(i * 13 + 5);
    configure_full();
    AMXEMU_FENCE();
    {  // SIB base 101 with mod 00: disp32, no base register
        register long i asm("r9") = kStride;
        __asm__ volatile("tileloadd 0x20000100(,%0,1), %%tmm1" ::"r"(i) : "memory");
        expect_tmm1(base + 0x100, kStride);
    }
    {  // 67h: 32-bit address and stride registers
        register uint32_t b asm("eax") = 0x20000200;
        register uint32_t i asm("ecx") = kStride;
        __asm__ volatile("addr32 tileloadd (%0,%1,1), %%tmm1" ::"r"(b), "r"(i) : "memory");
        expect_tmm1(base + 0x200, kStride);
    }
    _tile_release();
    munmap(low, 1 << 16);
}

__thread uint8_t t_rows[16 * 64];

void fs_segment_form(void** /*state*/) {
    for (int i = 0; i < 16 * 64; ++i) t_rows[i] = uint8_t(i ^ 0x5c);
    configure_full();
    // On x86-64 glibc the thread pointer (FS base) is pthread_self().
    const uintptr_t fs = reinterpret_cast<uintptr_t>(pthread_self());
    AMXEMU_FENCE();
    register uintptr_t off asm("rax") = reinterpret_cast<uintptr_t>(t_rows) - fs;
    register long i asm("rcx") = 64;
    __asm__ volatile("tileloadd %%fs:(%0,%1,1), %%tmm1" ::"r"(off), "r"(i) : "memory");
    expect_tmm1(t_rows, 64);
    _tile_release();
}

void tilecfg_memory_forms(void** /*state*/) {
    g_cfg_static = TileCfg();
    g_cfg_static.tile(0, 3, 12).tile(6, 9, 60);
    AMXEMU_FENCE();
    __asm__ volatile("ldtilecfg %0" ::"m"(g_cfg_static) : "memory");  // RIP-relative in PIC
    TileCfg back;
    {  // rsp-relative through the compiler's "m" (SIB, no index)
        __asm__ volatile("sttilecfg %0" : "=m"(back)::"memory");
        assert_memory_equal(&back, &g_cfg_static, 64);
    }
    {  // r13 base (mod 01, disp8 0), r9 base + disp32, and base + index*8 (index in the address)
        std::vector<uint8_t> buf(4096 + 64 * 8);
        register uint8_t* b13 asm("r13") = buf.data();
        __asm__ volatile("sttilecfg (%0)" ::"r"(b13) : "memory");
        assert_memory_equal(buf.data(), &g_cfg_static, 64);
        register uint8_t* b9 asm("r9") = buf.data();
        __asm__ volatile("sttilecfg 0x400(%0)" ::"r"(b9) : "memory");
        assert_memory_equal(buf.data() + 0x400, &g_cfg_static, 64);
        register uint8_t* bb asm("rbx") = buf.data();
        register long ix asm("r14") = 8;
        __asm__ volatile("sttilecfg 0x800(%0,%1,8)" ::"r"(bb), "r"(ix) : "memory");
        assert_memory_equal(buf.data() + 0x800 + 64, &g_cfg_static, 64);
        TileCfg other;
        other.tile(2, 16, 64);
        std::memcpy(buf.data() + 0x200 + 2 * 8, &other, 64);
        AMXEMU_FENCE();
        register long ix2 asm("r12") = 2;
        __asm__ volatile("ldtilecfg 0x200(%0,%1,8)" ::"r"(b13), "r"(ix2) : "memory");
        tile_storeconfig(&back);
        assert_memory_equal(&back, &other, 64);
    }
    _tile_release();
}

void tdpbf16ps_tile_numbers(void** /*state*/) {
    // dst in ModRM.reg, src1 in ModRM.r/m, src2 in VEX.vvvv. All tiles are 1 x 4 bytes: one
    // bf16 pair. Tile t starts as the pair (t + 1, 0).
    TileCfg cfg;
    for (int t = 0; t < 8; ++t) cfg.tile(t, 1, 4);
    tile_loadconfig(&cfg);
    uint16_t pairs[8][2];
    for (int t = 0; t < 8; ++t) {
        pairs[t][0] = amxemu_test::bf16(float(t + 1));
        pairs[t][1] = 0;
    }
    AMXEMU_FENCE();
    _tile_loadd(0, pairs[0], 4);
    _tile_loadd(1, pairs[1], 4);
    _tile_loadd(2, pairs[2], 4);
    _tile_loadd(3, pairs[3], 4);
    _tile_loadd(4, pairs[4], 4);
    _tile_loadd(5, pairs[5], 4);
    _tile_loadd(6, pairs[6], 4);
    const float one = 1.0f;
    float v = 0;
    AMXEMU_FENCE();
    _tile_loadd(7, &one, 4);
    _tile_dpbf16ps(7, 5, 6);  // 1 + 6 * 7
    _tile_stored(7, &v, 4);
    assert_true(v == 43.0f);
    // tmm7 now holds fp32 43.0: as a bf16 pair that is (0, 43). tmm3 is (4, 0).
    _tile_loadd(0, &one, 4);
    _tile_dpbf16ps(0, 7, 3);  // 1 + 0 * 4 + 43 * 0
    _tile_stored(0, &v, 4);
    assert_true(v == 1.0f);
    _tile_loadd(3, &one, 4);
    _tile_dpbf16ps(3, 1, 4);  // 1 + 2 * 5
    _tile_stored(3, &v, 4);
    assert_true(v == 11.0f);
    _tile_release();
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tileloadd_register_forms),
        cmocka_unit_test(tilestored_register_forms),
        cmocka_unit_test(no_base_and_address_size_forms),
        cmocka_unit_test(fs_segment_form),
        cmocka_unit_test(tilecfg_memory_forms),
        cmocka_unit_test(tdpbf16ps_tile_numbers),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

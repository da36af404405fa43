// CPUID/XGETBV/arch_prctl feature detection. Every bit used is a named constant below with the
// SDM/kernel source of its meaning; nothing here executes an AVX-512 or AMX instruction.
#include "kernels/runtime/cpu_features.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace amxblas::kernels {
namespace {

struct Regs {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

bool cpuid(unsigned leaf, unsigned subleaf, Regs* r) {
    return __get_cpuid_count(leaf, subleaf, &r->eax, &r->ebx, &r->ecx, &r->edx) != 0;
}

constexpr unsigned bit(int n) { return 1u << n; }

// CPUID leaf 1, ECX.
constexpr unsigned kLeaf1EcxOsxsave = bit(27);
constexpr unsigned kLeaf1EcxAvx = bit(28);
// CPUID leaf 7 subleaf 0.
constexpr unsigned kLeaf7EbxAvx2 = bit(5);
constexpr unsigned kLeaf7EbxAvx512f = bit(16);
constexpr unsigned kLeaf7EbxAvx512dq = bit(17);
constexpr unsigned kLeaf7EbxAvx512bw = bit(30);
constexpr unsigned kLeaf7EbxAvx512vl = bit(31);
constexpr unsigned kLeaf7EcxAvx512Vnni = bit(11);
constexpr unsigned kLeaf7EdxAmxBf16 = bit(22);
constexpr unsigned kLeaf7EdxAmxTile = bit(24);
constexpr unsigned kLeaf7EdxAmxInt8 = bit(25);
// CPUID leaf 7 subleaf 1, EAX.
constexpr unsigned kLeaf7s1EaxAvx512Bf16 = bit(5);
// CPUID leaf 0x1D subleaf 0: EAX = highest supported palette.
constexpr unsigned kLeafTileInfo = 0x1D;
constexpr unsigned kAmxPalette1 = 1;

// XCR0 state components the OS must save for YMM code: SSE(1), AVX(2); for ZMM code also
// opmask(5), ZMM_Hi256(6), Hi16_ZMM(7).
constexpr std::uint64_t kXcr0YmmState = bit(1) | bit(2);
constexpr std::uint64_t kXcr0ZmmState = kXcr0YmmState | bit(5) | bit(6) | bit(7);

// Linux uapi asm/prctl.h: ask for permission to use a dynamically enabled XSTATE feature.
constexpr long kArchReqXcompPerm = 0x1023;
constexpr long kXfeatureXtiledata = 18;

std::uint64_t xgetbv0() {
    std::uint32_t lo, hi;
    // XGETBV with ECX = 0 reads XCR0; encoded as bytes so the file needs no -mxsave.
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return (std::uint64_t(hi) << 32) | lo;
}

bool os_saves(std::uint64_t state) {
    Regs r1;
    if (!cpuid(1, 0, &r1) || !(r1.ecx & kLeaf1EcxOsxsave)) return false;
    return (xgetbv0() & state) == state;
}

bool os_saves_zmm() { return os_saves(kXcr0ZmmState); }

bool detect_avx2() {
    Regs r1, r7;
    if (!cpuid(1, 0, &r1) || !(r1.ecx & kLeaf1EcxAvx) || !cpuid(7, 0, &r7)) return false;
    return (r7.ebx & kLeaf7EbxAvx2) && os_saves(kXcr0YmmState);
}

bool detect_avx512_split() {
    Regs r7;
    if (!cpuid(7, 0, &r7)) return false;
    const unsigned need = kLeaf7EbxAvx512f | kLeaf7EbxAvx512dq | kLeaf7EbxAvx512bw | kLeaf7EbxAvx512vl;
    return (r7.ebx & need) == need && os_saves_zmm();
}

bool detect_avx512_bf16() {
    Regs r71;
    return detect_avx512_split() && cpuid(7, 1, &r71) && (r71.eax & kLeaf7s1EaxAvx512Bf16);
}

// VL too, though VPDPBUSD on zmm needs only F: the kernel's file is built with -mavx512vl and
// -mavx512bw, which let the compiler use those encodings anywhere in it.
bool detect_avx512_vnni() {
    Regs r7;
    if (!cpuid(7, 0, &r7)) return false;
    const unsigned need = kLeaf7EbxAvx512f | kLeaf7EbxAvx512bw | kLeaf7EbxAvx512vl;
    return (r7.ebx & need) == need && (r7.ecx & kLeaf7EcxAvx512Vnni) && os_saves_zmm();
}

bool detect_amx_bf16() {
    Regs r7, tile;
    if (!cpuid(7, 0, &r7)) return false;
    // AMX-INT8 too: the amx backend's table holds the INT8 engine's TDPBSSD kernel. Every AMX
    // CPU so far (Sapphire Rapids on) has all three.
    const unsigned need = kLeaf7EdxAmxTile | kLeaf7EdxAmxBf16 | kLeaf7EdxAmxInt8;
    if ((r7.edx & need) != need) return false;
    if (!cpuid(kLeafTileInfo, 0, &tile) || tile.eax < kAmxPalette1) return false;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace

bool cpu_has_avx2() {
    static const bool v = detect_avx2();
    return v;
}

bool cpu_has_avx512_split() {
    static const bool v = detect_avx512_split();
    return v;
}

bool cpu_has_avx512_bf16() {
    static const bool v = detect_avx512_bf16();
    return v;
}

bool cpu_has_avx512_vnni() {
    static const bool v = detect_avx512_vnni();
    return v;
}

bool cpu_has_amx_bf16() {
    static const bool v = detect_amx_bf16();
    return v;
}

bool amx_emulator_present() { return dlsym(RTLD_DEFAULT, "amxemu_harness_version") != nullptr; }

}  // namespace amxblas::kernels

// AVX-512 VNNI INT8 micro-kernel (VPDPBUSD) on the packed INT8 layouts of microkernel.h, at
// kAmxInt8Geometry: a 32 x 32 INT32 tile, blocks of 64 K values, B rows of 16 column quads.
//
// Signed bytes through an unsigned x signed instruction. VPDPBUSD multiplies the unsigned
// bytes of its first source by the signed bytes of its second (AVX-512 VNNI has no signed x
// signed form), so A's bytes are offset: a' = a + 128 in [0, 255], which for a byte is a XOR
// 0x80 (the sign bit flipped) read as unsigned. Then, per output,
//
//     sum_k a(k) b(k) = sum_k a'(k) b(k) - 128 * sum_k b(k),
//
// and the correction depends on the column only: VPDPBUSD of all-0x80 bytes (unsigned 128)
// against the very B rows the product reads gives 128 x (the sum of each column's K quad);
// summed over the panel it is 128 x the column sum, the same for all 32 rows of the tile, so
// it is computed once per call (2 instructions per K quad against the product's 64).
//
// Exactness, for a panel depth D = 64 * ksteps <= kInt8MaxPanelDepth = 2^16 (the caller's
// bound). VPDPBUSD forms each byte product exactly in 16 bits (|a' b| <= 255 * 128 = 32640
// < 2^15), adds the four of a quad and the accumulator in 32 bits, and does not saturate
// (that is VPDPBUSDS). Every 32-bit value here is a partial sum over at most D K values:
//   - the offset product, |sum a' b| <= 255 * 128 * 2^16 = 2139095040 < 2^31 - 1;
//   - the correction, |128 * sum b| <= 128 * 128 * 2^16 = 2^30;
//   - their difference, the signed product itself, |sum a b| <= 2^30.
// So no addition, the final subtraction included, ever leaves the INT32 range, and the tile
// is the exact integer product: the same bits as reference_product_s8, in any order. (Even
// a wrap would cancel, the arithmetic being modulo 2^32 and the result in range, but none
// happens.) The offset product could pass 2^31 only past 2^31 / 32640 = 65793 K values, and
// the signed result only past 2^17: the contract's 2^16 keeps every partial sum in range.
//
// Register block: 8 rows x 32 columns = 16 zmm accumulators (acc[r][h]: row r, columns
// 16h..16h+15, one INT32 lane per column). Per K quad q: two zmm loads of the B rows (quad q
// of column groups 0 and 1; each dword lane holds B(4q..4q+3, n)), then per row one 32-bit
// broadcast of A(r, 4q..4q+3), flipped to unsigned, and two VPDPBUSD. 16 independent chains
// cover VPDPBUSD's latency x throughput on the cores that have it, with 19 of 32 zmm live.
// The four row blocks of the tile run one after another, each over the whole panel, and store
// once (accumulator minus correction).
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (kernels/isa/avx512/sources.cmake);
// called only where cpu_has_avx512_vnni().
#include "kernels/isa/avx512/microkernel_avx512_int8.h"

#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "kernels/isa/microkernel.h"

namespace amxblas::kernels {
namespace {

constexpr TileGeometry kG = kAmxInt8Geometry;
constexpr int kRows = 8;                              // rows per register block
constexpr int kQuads = kG.kstep / 4;                  // K quads per block: 16
constexpr std::size_t kABlock = std::size_t(kG.mr) * kG.kstep;  // bytes of one A block
constexpr std::size_t kBBlock = std::size_t(kG.kstep) * kG.nr;  // bytes of one B block
constexpr int kGroupBytes = kG.kstep * kG.nr_vnni;    // one 16-column group of a B block
constexpr int kRowBytes = 4 * kG.nr_vnni;             // one B row: a K quad of 16 columns
static_assert(kRowBytes == 64 && kG.nr == 2 * kG.nr_vnni && kG.mr % kRows == 0,
              "one zmm per B row, two column groups per tile");

// The four bytes A(r, 4q..4q+3), as one dword with the first K value in the low byte (the
// byte order in which VPDPBUSD pairs them with a B lane's four K values).
inline int load_quad(const std::int8_t* p) {
    int v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// 128 x (sum over the panel of B(k, n)): columns 0-15 in corr[0], 16-31 in corr[1]. Four
// chains per column group, so the pass is not bound by VPDPBUSD's latency.
void offset_correction(int ksteps, const std::int8_t* b, __m512i (&corr)[2]) {
    const __m512i u128 = _mm512_set1_epi8(-128);  // the byte 0x80: 128 read as unsigned
    __m512i part[2][4];
    for (auto& h : part)
        for (auto& v : h) v = _mm512_setzero_si512();
    for (int s = 0; s < ksteps; ++s) {
        const std::int8_t* bs = b + std::size_t(s) * kBBlock;
#pragma GCC unroll 16
        for (int q = 0; q < kQuads; ++q)
            for (int h = 0; h < 2; ++h)
                part[h][q % 4] = _mm512_dpbusd_epi32(part[h][q % 4], u128,
                                                     _mm512_loadu_si512(bs + h * kGroupBytes + q * kRowBytes));
    }
    for (int h = 0; h < 2; ++h)
        corr[h] = _mm512_add_epi32(_mm512_add_epi32(part[h][0], part[h][1]), _mm512_add_epi32(part[h][2], part[h][3]));
}

// acc += A'(rows of a, this K step) x B(this K step), A' = A + 128 (unsigned).
inline void step(__m512i (&acc)[kRows][2], const std::int8_t* a, const std::int8_t* b) {
    const __m512i flip = _mm512_set1_epi8(-128);  // XOR 0x80 = + 128 on each byte
#pragma GCC unroll 16
    for (int q = 0; q < kQuads; ++q) {
        const __m512i b0 = _mm512_loadu_si512(b + q * kRowBytes);
        const __m512i b1 = _mm512_loadu_si512(b + kGroupBytes + q * kRowBytes);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
            const __m512i ar = _mm512_xor_si512(_mm512_set1_epi32(load_quad(a + r * kG.kstep + 4 * q)), flip);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], ar, b0);
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], ar, b1);
        }
    }
}

}  // namespace

void avx512_vnni_product_s8(int ksteps, const std::int8_t* a, const std::int8_t* b, std::int32_t* c, int ldc) {
    __m512i corr[2];
    offset_correction(ksteps, b, corr);
    for (int rb = 0; rb < kG.mr; rb += kRows) {
        __m512i acc[kRows][2];
        for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
        for (int s = 0; s < ksteps; ++s)
            step(acc, a + std::size_t(s) * kABlock + std::size_t(rb) * kG.kstep, b + std::size_t(s) * kBBlock);
        for (int r = 0; r < kRows; ++r) {
            std::int32_t* cr = c + std::size_t(rb + r) * ldc;
            _mm512_storeu_si512(cr, _mm512_sub_epi32(acc[r][0], corr[0]));
            _mm512_storeu_si512(cr + kG.nr_vnni, _mm512_sub_epi32(acc[r][1], corr[1]));
        }
    }
}

}  // namespace amxblas::kernels

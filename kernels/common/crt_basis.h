// The moduli of the INT8 FP64 engine and what the Chinese remainder theorem needs of them, as a
// plain type: kernels/isa/'s INT8 loops read it, kernels/int8/crt_basis.h builds one per count
// (Ozaki scheme II: Ozaki, Uchino and Imamura, arXiv 2504.08009; Uchino, Ozaki and Imamura,
// SC'25, arXiv 2508.03984). docs/fp64-int8.md proves what is used here.
//
// An integer matrix product P = Ā B̄ is computed as `count` INT8 GEMMs, one per modulus m_l:
// the residues of Ā and B̄ modulo m_l, in [-128, 127], multiplied exactly in INT32. P's entries
// are then known modulo M = m_1 ... m_count, and P itself whenever |P_ij| < 2^range_bits
// (crt_reconstruct.h): the engine scales its operands so that this holds.
//
// The moduli: 256 and then, going down, every number coprime with all those already taken
// (255, 253, 251, 247, 241, 239, ...), so that M grows by almost 8 bits per GEMM. A count of c
// takes the first c. At most 24: then M < 2^185, and the reconstruction works modulo 2^192
// (wide_int.h).
#pragma once

#include <cstdint>

#include "kernels/common/engine_table.h"
#include "kernels/common/wide_int.h"

namespace amxblas::kernels {

// kInt8MinModuli, kInt8MaxModuli: the int8 row of kernels/common/engines.def.
static_assert(kInt8MaxModuli <= 24, "above 24 moduli M passes 2^185 and the reconstruction's 2^192 (wide_int.h)");

// M / m_l and M in base 2^40 (crt_reconstruct.cc): five limbs cover 2^200 > M (CrtBasis::limbs
// says how many a basis needs).
constexpr int kCrtLimbBits = 40, kCrtLimbs = 5;
// Entries reconstructed per call (crt_reconstruct.h, and its sums in kernels/isa/int8_residue_loops.h).
constexpr int kCrtRow = 256;

struct CrtBasis {
    int count = 0;
    int m[kInt8MaxModuli] = {};        // the moduli, pairwise coprime, m[0] = 256
    int q[kInt8MaxModuli] = {};        // (M / m_l)^-1 mod m_l
    double inv_m[kInt8MaxModuli] = {};  // fl(1 / m_l)
    Wide w[kInt8MaxModuli] = {};       // M / m_l
    Wide M;                            // the product, below 2^185
    double log2_M = 0;
    // An integer with |x| < 2^range_bits is recovered exactly: 2^range_bits <= M / 4.
    int range_bits = 0;
    // w_limb[l][j]: limb j of M / m_l in base 2^40 (an integer below 2^40, exact in FP64);
    // M_limb[j] likewise.
    double w_limb[kInt8MaxModuli][kCrtLimbs] = {};
    double M_limb[kCrtLimbs] = {};
    int limbs = 0;  // how many of them M has: the limbs from there on are 0 in every value above
    // 2^32 mod m_l and 2^64 mod m_l: the residues of integers cut into 32-bit pieces
    // (kernels/isa/int8_residue_loops.inc).
    int two32_mod[kInt8MaxModuli] = {}, two64_mod[kInt8MaxModuli] = {};
    // For the residues of integers below 2^62 in magnitude from their bytes (AVX-512 VNNI,
    // kernels/isa/avx512/int8_residues_vnni.cc): byte d of byte_pow[l] (two little-endian dwords,
    // bytes 0-3 and 4-7) is 256^d mod m_l as a symmetric int8, and minus_2_62[l] is
    // -(2^62 mod m_l), symmetric; 0 for m_l = 256.
    std::int32_t byte_pow[kInt8MaxModuli][2] = {};
    std::int32_t minus_2_62[kInt8MaxModuli] = {};
};

// The largest |q| the bytes' residues take: q + 2^62 must be a nonnegative 64-bit integer.
constexpr double kInt8ByteResidueLimit = 0x1p62;

}  // namespace amxblas::kernels

// The moduli of the INT8 FP64 engine and what the Chinese remainder theorem needs of them
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
// takes the first c. At most 16: then M < 2^128, and the reconstruction works modulo 2^128.
#pragma once

#include <cstdint>

namespace amxblas::kernels {

using u128 = unsigned __int128;

constexpr int kInt8MinModuli = 6;
constexpr int kInt8MaxModuli = 16;

struct CrtBasis {
    int count = 0;
    int m[kInt8MaxModuli] = {};        // the moduli, pairwise coprime, m[0] = 256
    int q[kInt8MaxModuli] = {};        // (M / m_l)^-1 mod m_l
    double inv_m[kInt8MaxModuli] = {};  // fl(1 / m_l)
    u128 w[kInt8MaxModuli] = {};       // M / m_l (below 2^128)
    u128 M = 0;                        // the product (below 2^128)
    // An integer with |x| < 2^range_bits is recovered exactly: 2^range_bits <= M / 4 and <= 2^125.
    int range_bits = 0;
};

// The basis of the first `count` moduli, count in [kInt8MinModuli, kInt8MaxModuli]; built when
// the library loads (no function-local static: fork safety, kernels/runtime/process_state.h).
const CrtBasis& crt_basis(int count);

}  // namespace amxblas::kernels

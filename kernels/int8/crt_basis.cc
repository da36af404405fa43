#include "kernels/int8/crt_basis.h"

#include <array>
#include <cmath>

namespace amxblas::kernels {
namespace {

int gcd(int a, int b) {
    while (b) {
        const int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// a^-1 mod m for gcd(a, m) = 1 (extended Euclid).
int inverse_mod(int a, int m) {
    int r0 = m, r1 = a % m, t0 = 0, t1 = 1;
    while (r1) {
        const int qq = r0 / r1, r2 = r0 - qq * r1, t2 = t0 - qq * t1;
        r0 = r1;
        r1 = r2;
        t0 = t1;
        t1 = t2;
    }
    return ((t0 % m) + m) % m;
}


CrtBasis make_basis(int count) {
    CrtBasis b;
    b.count = count;
    int taken = 0;
    for (int cand = 256; taken < count; --cand) {
        bool coprime = true;
        for (int l = 0; l < taken; ++l) coprime = coprime && gcd(cand, b.m[l]) == 1;
        if (coprime) b.m[taken++] = cand;
    }
    // M / m_l as the product of the other moduli, and its residue modulo m_l, exactly.
    b.M = Wide::from(1);
    for (int l = 0; l < count; ++l) {
        Wide p;
        add_mul(p, b.M, std::uint32_t(b.m[l]));
        b.M = p;
    }
    for (int l = 0; l < count; ++l) {
        b.w[l] = Wide::from(1);
        int rem = 1;
        for (int r = 0; r < count; ++r) {
            if (r == l) continue;
            Wide p;
            add_mul(p, b.w[l], std::uint32_t(b.m[r]));
            b.w[l] = p;
            rem = rem * b.m[r] % b.m[l];
        }
        b.q[l] = inverse_mod(rem, b.m[l]);
        b.inv_m[l] = 1.0 / b.m[l];
        int p2 = 1;
        for (int e = 1; e <= 64; ++e) {
            p2 = p2 * 2 % b.m[l];
            if (e == 32) b.two32_mod[l] = p2;
        }
        b.two64_mod[l] = p2;
        // 256^d mod m_l and 2^62 mod m_l as symmetric residues (|r| <= m_l / 2 <= 127 for odd
        // m_l; 256 takes the low byte alone: every 256^d with d > 0 and 2^62 are 0 modulo it).
        const int m = b.m[l];
        const auto symmetric = [m](int r) { return r > m / 2 ? r - m : r; };
        unsigned char bytes[8] = {};
        int pw = 1;
        for (int d = 0; d < 8; ++d) {
            bytes[d] = static_cast<unsigned char>(static_cast<std::int8_t>(symmetric(pw)));
            pw = pw * 256 % m;
        }
        for (int half = 0; half < 2; ++half)
            b.byte_pow[l][half] = std::int32_t(std::uint32_t(bytes[4 * half]) | std::uint32_t(bytes[4 * half + 1]) << 8 |
                                               std::uint32_t(bytes[4 * half + 2]) << 16 |
                                               std::uint32_t(bytes[4 * half + 3]) << 24);
        int p62 = 1;
        for (int e = 0; e < 62; ++e) p62 = p62 * 2 % m;
        b.minus_2_62[l] = -symmetric(p62);
    }
    // Base 2^40 limbs of the 192-bit values.
    const auto limb = [](const Wide& x, int j) {
        const int bit = kCrtLimbBits * j, word = bit / 64, off = bit % 64;
        unsigned __int128 two = x.w[word];
        if (word + 1 < 3) two |= (unsigned __int128)x.w[word + 1] << 64;
        return double(std::uint64_t(two >> off) & ((std::uint64_t(1) << kCrtLimbBits) - 1));
    };
    for (int j = 0; j < kCrtLimbs; ++j) {
        for (int l = 0; l < count; ++l) b.w_limb[l][j] = limb(b.w[l], j);
        b.M_limb[j] = limb(b.M, j);
    }
    // floor(log2 M), from its limbs.
    int top = 191;
    while (top > 0 && !(b.M.w[top / 64] >> (top % 64) & 1)) --top;
    double lm = 0;
    for (int l = 0; l < count; ++l) lm += std::log2(double(b.m[l]));
    b.log2_M = lm;
    b.range_bits = top - 2;  // 2^range_bits <= M / 4
    b.limbs = top / kCrtLimbBits + 1;
    return b;
}

std::array<CrtBasis, kInt8MaxModuli + 1> make_all() {
    std::array<CrtBasis, kInt8MaxModuli + 1> all{};
    for (int c = kInt8MinModuli; c <= kInt8MaxModuli; ++c) all[c] = make_basis(c);
    return all;
}

const std::array<CrtBasis, kInt8MaxModuli + 1> kBases = make_all();

}  // namespace

const CrtBasis& crt_basis(int count) {
    if (count < kInt8MinModuli) count = kInt8MinModuli;
    if (count > kInt8MaxModuli) count = kInt8MaxModuli;
    return kBases[count];
}

}  // namespace amxblas::kernels

#include "kernels/int8/crt_basis.h"

#include <array>

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

int floor_log2(u128 x) {
    int b = -1;
    while (x) {
        x >>= 1;
        ++b;
    }
    return b;
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
    b.M = 1;
    for (int l = 0; l < count; ++l) b.M *= u128(b.m[l]);
    for (int l = 0; l < count; ++l) {
        b.w[l] = b.M / u128(b.m[l]);
        b.q[l] = inverse_mod(int(b.w[l] % u128(b.m[l])), b.m[l]);
        b.inv_m[l] = 1.0 / b.m[l];
    }
    const int bits = floor_log2(b.M) - 2;  // 2^bits <= M / 4
    b.range_bits = bits < 125 ? bits : 125;
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

#include "scripts/replay/exact_sum.h"

#include <cmath>
#include <cstring>

namespace amxblas::replay {

namespace {

// x = (-1)^negative m 2^e, m < 2^53 an integer (0 for x = 0). x must be finite.
void decompose(double x, std::uint64_t* m, int* e, bool* negative) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    *negative = bits >> 63;
    const int biased = static_cast<int>((bits >> 52) & 0x7ff);
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
    if (biased == 0) {  // zero or subnormal
        *m = fraction;
        *e = -1074;
    } else {
        *m = fraction | (std::uint64_t{1} << 52);
        *e = biased - 1075;
    }
}

// Settles the carries: afterwards every digit but the last is in [0, 2^32), and the last holds
// the sign (two's complement: -1 for a negative value, given the headroom).
template <int N>
void settle(std::int64_t (&d)[N]) {
    for (int i = 0; i + 1 < N; ++i) {
        const std::int64_t c = d[i] >> 32;  // arithmetic shift: floor(d / 2^32)
        d[i] -= c * (std::int64_t{1} << 32);
        d[i + 1] += c;
    }
}

}  // namespace

void ExactSum::clear() {
    std::memset(digit_, 0, sizeof digit_);
    terms_ = 0;
}

void ExactSum::carry() {
    settle(digit_);
    terms_ = 0;
}

// Adds (-1)^negative (limb[2] 2^128 + limb[1] 2^64 + limb[0]) 2^exponent.
void ExactSum::add_scaled(std::uint64_t limb[3], int exponent, bool negative) {
    const int bit = exponent + kBias;  // >= 0: exponent >= -3222
    const int first = bit / 32, shift = bit % 32;
    // The magnitude shifted left by `shift` (< 32) in four 64-bit words: below 2^191.
    std::uint64_t w[4] = {limb[0], limb[1], limb[2], 0};
    if (shift) {
        for (int i = 3; i > 0; --i) w[i] = (w[i] << shift) | (w[i - 1] >> (64 - shift));
        w[0] <<= shift;
    }
    for (int j = 0; j < 8; ++j) {
        const std::int64_t part = static_cast<std::int64_t>((w[j / 2] >> (32 * (j % 2))) & 0xffffffffu);
        if (part) digit_[first + j] += negative ? -part : part;
    }
    if (++terms_ >= (std::uint64_t{1} << 30)) carry();
}

void ExactSum::add(double x) { add(x, 1.0, 1.0); }

void ExactSum::add(double x, double y) { add(x, y, 1.0); }

void ExactSum::add(double x, double y, double z) {
    if (x == 0 || y == 0 || z == 0) return;
    std::uint64_t mx, my, mz;
    int ex, ey, ez;
    bool nx, ny, nz;
    decompose(x, &mx, &ex, &nx);
    decompose(y, &my, &ey, &ny);
    decompose(z, &mz, &ez, &nz);
    // mx my < 2^106 in 128 bits; times mz < 2^53: below 2^159, in three words.
    const unsigned __int128 p = static_cast<unsigned __int128>(mx) * my;
    const unsigned __int128 lo = static_cast<unsigned __int128>(static_cast<std::uint64_t>(p)) * mz;
    const unsigned __int128 hi = static_cast<unsigned __int128>(static_cast<std::uint64_t>(p >> 64)) * mz;
    const unsigned __int128 mid = (lo >> 64) + static_cast<std::uint64_t>(hi);
    std::uint64_t limb[3] = {static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(mid),
                             static_cast<std::uint64_t>(hi >> 64) + static_cast<std::uint64_t>(mid >> 64)};
    add_scaled(limb, ex + ey + ez, nx ^ ny ^ nz);
}

double ExactSum::rounded() const {
    std::int64_t d[kDigits];
    std::memcpy(d, digit_, sizeof d);
    settle(d);
    bool negative = false;
    if (d[kDigits - 1] < 0) {
        for (std::int64_t& x : d) x = -x;
        settle(d);
        negative = true;
    }
    int top = kDigits - 1;
    while (top >= 0 && d[top] == 0) --top;
    if (top < 0) return 0.0;
    // h: the leading bit; the value is in [2^e, 2^(e + 1)) with e = h - kBias.
    const int h = 32 * top + (63 - __builtin_clzll(static_cast<std::uint64_t>(d[top])));
    const int e = h - kBias;
    if (e > 1023) return negative ? -HUGE_VAL : HUGE_VAL;
    // The unit in the last place of the result: 2^q, with q >= -1074 (subnormals round there).
    const int q = e - 52 > -1074 ? e - 52 : -1074;
    const int qb = q + kBias;  // its bit; qb >= 2148 > 0
    auto bit_at = [&](int b) { return (static_cast<std::uint64_t>(d[b / 32]) >> (b % 32)) & 1u; };
    std::uint64_t m = 0;
    for (int b = h; b >= qb; --b) m = (m << 1) | bit_at(b);
    const bool round = bit_at(qb - 1);
    // Sticky: any bit below the round bit, the rest of its digit first, then whole digits.
    const int below = qb - 1;  // bits 0 .. below - 1
    const std::uint64_t low_mask = (std::uint64_t{1} << (below % 32)) - 1;
    bool sticky = (static_cast<std::uint64_t>(d[below / 32]) & low_mask) != 0;
    for (int i = below / 32 - 1; i >= 0 && !sticky; --i) sticky = d[i] != 0;
    if (round && (sticky || (m & 1))) ++m;  // to nearest, ties to even; m may reach 2^53
    const double r = std::ldexp(static_cast<double>(m), q);  // exact, or inf past the range
    return negative ? -r : r;
}

double ExactSum::distance_to(double v) const {
    ExactSum diff = *this;
    diff.add(-v);
    return std::fabs(diff.rounded());
}

}  // namespace amxblas::replay

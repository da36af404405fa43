// An exact accumulator for sums of products of up to three doubles, rounded once at the end:
// the replay's reference. Every double is m 2^e with an integer m < 2^53 and e >= -1074, so a
// product of three is an integer below 2^159 times 2^(e1 + e2 + e3), with e1 + e2 + e3 >= -3222.
// The sum is held as a fixed-point integer in units of 2^-3222, wide enough for any such product
// (below 2^3072) and 2^31 more of them (Kulisch's long accumulator), in 32-bit digits kept in
// 64-bit words: a term adds its digits without carrying, and the carries are settled only
// when the value is read, so a term costs a few additions whatever the signs. Nothing is
// rounded before rounded() or error(): the result is the exact value rounded to nearest, ties
// to even, as IEEE 754 rounds one operation.
//
// Only finite values may be added (the caller checks): NaN and Inf have no exact sum.
#pragma once

#include <cstdint>

namespace amxblas::replay {

class ExactSum {
public:
    void clear();
    void add(double x);                      // + x
    void add(double x, double y);            // + x y
    void add(double x, double y, double z);  // + x y z
    // The sum rounded to the nearest double (ties to even); +-inf beyond double's range.
    double rounded() const;
    // |sum - v| rounded to the nearest double: the exact error of v against the sum.
    double distance_to(double v) const;

private:
    static constexpr int kBias = 3222;  // bit 0 is 2^-3222
    static constexpr int kDigits = 208;  // 6656 bits: 3072 + 3222 + 31 of headroom, and spare
    void add_scaled(std::uint64_t limb[3], int exponent, bool negative);
    std::int64_t digit_[kDigits] = {};
    std::uint64_t terms_ = 0;  // added since the last carry (a digit holds 2^31 terms safely)
    void carry();
};

}  // namespace amxblas::replay

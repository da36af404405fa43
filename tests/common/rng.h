/* The tests' one random number generator, for C and C++: a 64-bit linear congruential
 * generator (Knuth's MMIX constants), whose top bits make the numbers. Deterministic and the
 * same on every machine, so a failing case can be replayed from its seed; not for anything
 * that needs statistical quality beyond test inputs. Only the high bits are used (an LCG's
 * low bits have short periods).
 *
 *   amxt_rng r = amxt_rng_seeded(seed);   (or amxt_rng r = {state}: a raw starting state)
 *   amxt_rng_uniform(&r)                  uniform in [-1, 1) on a 2^-52 grid
 *   amxt_rng_next(&r)                     the next raw 64-bit state
 *
 * C++: amxblas::test::Rng wraps the same generator. */
#ifndef AMXBLAS_TESTS_COMMON_RNG_H
#define AMXBLAS_TESTS_COMMON_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s;
} amxt_rng;

/* Seeds 0, 1, 2, ... start far apart in the generator's cycle. */
static inline amxt_rng amxt_rng_seeded(uint64_t seed) {
    amxt_rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
    return r;
}

static inline uint64_t amxt_rng_next(amxt_rng* r) {
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return r->s;
}

static inline double amxt_rng_uniform(amxt_rng* r) {
    return (double)(amxt_rng_next(r) >> 11) * 0x1p-52 - 1.0;
}

#ifdef __cplusplus
namespace amxblas::test {

struct Rng {
    amxt_rng r;
    explicit Rng(uint64_t seed) : r(amxt_rng_seeded(seed)) {}
    uint64_t next() { return amxt_rng_next(&r); }
    double uniform() { return amxt_rng_uniform(&r); }                 // [-1, 1)
    double uniform01() { return double(next() >> 11) * 0x1p-53; }     // [0, 1)
    int below(int n) { return int(((next() >> 32) * uint64_t(n)) >> 32); }  // 0 .. n-1, 1 <= n < 2^31
    bool chance(double p) { return uniform01() < p; }
};

}  // namespace amxblas::test
#endif

#endif

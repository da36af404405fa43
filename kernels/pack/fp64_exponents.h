// The FP64 exponent scan's pieces shared by fp64_exponents.cc and pack_fp64.cc (internal): the
// scan's results and the per-thread scratch.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/pack/pack.h"
#include "kernels/runtime/per_participant.h"

namespace amxblas::kernels {

// One participant's part of the exponent scan, a cache line of its own (the FP64 pack's is in
// pack.h, shared with pack_generic.cc).
struct alignas(kCacheLine) ExponentPartial {
    bool bad = false, any = false;
};

inline int ceil_log2(double m) {  // m > 0 and finite
    int e;
    const double f = std::frexp(m, &e);  // m = f * 2^e, f in [0.5, 1)
    return f == 0.5 ? e - 1 : e;
}

// The exponent scan's results (fp64_outer_exponents): exps and zero per outer index, and per
// participant whether an entry was Inf or NaN and whether one was nonzero. Maxima come as |x|
// patterns (split.h): Inf and NaN above every finite value, and for finite ones the largest
// pattern is the largest magnitude.
struct ExponentScan {
    int* exps;
    unsigned char* zero;  // optional
    PerParticipant<ExponentPartial> part;
    ExponentScan(int* e, unsigned char* z, int threads) : exps(e), zero(z), part(std::max(1, threads)) {}
    void record(int o, std::uint64_t m, int who) {
        const bool nf = m >= kF64InfBits;
        double mx;
        std::memcpy(&mx, &m, sizeof mx);
        part[who].bad = part[who].bad || nf;
        part[who].any = part[who].any || m != 0;
        exps[o] = m != 0 && !nf ? ceil_log2(mx) : 0;
        if (zero) zero[o] = m == 0;
    }
    bool bad() const {
        return std::any_of(part.begin(), part.end(), [](const ExponentPartial& p) { return p.bad; });
    }
    bool any() const {
        return std::any_of(part.begin(), part.end(), [](const ExponentPartial& p) { return p.any; });
    }
};

// Scratch kept per calling thread from call to call, so that a warm routed call takes no
// fresh heap page for it (kernels_second_call_test counts page faults): the exponent scan's
// per-participant maxima (fp64_outer_exponents) and the FP64 pack's partials (pack_fp64).
struct PackScratch {
    std::vector<std::uint64_t> maxima;
    PerParticipant<Fp64PackPartial> partials;
};
PackScratch& pack_scratch();

}  // namespace amxblas::kernels

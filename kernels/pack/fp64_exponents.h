// The FP64 exponent scan's pieces shared by fp64_exponents.cc and pack_fp64.cc (internal): the
// scan's results, the per-panel scan, the row-exponent guess and its per-thread scratch.
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

// The scan of one panel of a real view: rows (A) or columns (B) o0 .. o0 + n - 1 of op(X),
// n <= kTile, recorded by participant `who`.
void scan_panel(const OperandView<double>& x, bool as_rows, const SplitKernels& sk, int o0, int n, int who,
                ExponentScan* scan);

// The guessed pack's temporaries (guess_row_exponents, pack_fp64 with guess), kept per calling
// thread from call to call: a warm routed call then takes no fresh heap page for them
// (kernels_workspace_test counts page faults). The pack's partials are here too: with a guess
// they are one per participant and panel, some KiB, and allocated afresh in every call they
// reached a fresh heap page in the second routed DGEMM of a process (kernels_second_call_test).
struct GuessScratch {
    std::vector<std::uint64_t> samples, rowmax;
    std::vector<int> guess, again;
    PerParticipant<Fp64PackPartial> partials;
};
GuessScratch& guess_scratch();

// op(A) = A stored by columns: a row's exponent needs all of its K values, which lie across
// every stored column, so a scan before the pack reads A twice. Instead the pack can scale by
// guessed exponents, take the rows' true maxima from the blocks it gathers, and pack again the
// few panels whose guess was wrong (pack_fp64). The guess: each row's exponent over three
// samples of 32 columns, the first, the middle and the last; taken when k >= 4 * 32 and the
// samples agree on at least 15/16 of the rows (dense data of one scale, where the whole row's
// exponent is the samples' one), else nothing (false): spread data would repack too many.
// (Data that agrees in the samples and is larger between them for many rows, all panels packed
// twice, is the worst case: about one extra pack of op(A), against the scan it saves.)
bool guess_row_exponents(const OperandView<double>& a, const SplitKernels& sk, int threads, std::vector<int>* guess);

}  // namespace amxblas::kernels

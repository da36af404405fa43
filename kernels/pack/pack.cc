// Fused split + pack. Each output block is gathered from op(X) into a 1024-value staging tile
// already in the packed order (with zeros past the matrix edge); the split then runs over that
// contiguous tile and writes every slice straight into its packed buffer.
#include "kernels/pack/pack.h"
#include "kernels/common/reasons.h"

#include <emmintrin.h>
#include <xmmintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/runtime/per_participant.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

// op(X)(i, l) for column-major storage.
template <typename T>
inline T op_at(const OperandView<T>& v, int i, int l) {
    return v.trans == 'N' ? v.x[i + std::size_t(l) * v.ld] : v.x[l + std::size_t(i) * v.ld];
}

// A block: tile[r * 32 + kk] = op(A)(i0 + r, l0 + kk).
template <typename T>
void gather_a(const OperandView<T>& a, int i0, int l0, T* tile) {
    const int rows = std::min(kTile, a.rows - i0), ks = std::min(kTile, a.cols - l0);
    std::fill(tile, tile + kStepElems, T(0));
    if (a.trans == 'N') {
        // Columns of A are contiguous in i: read down a column, write with stride 32.
        for (int kk = 0; kk < ks; ++kk) {
            const T* col = a.x + i0 + std::size_t(l0 + kk) * a.ld;
            for (int r = 0; r < rows; ++r) tile[r * kTile + kk] = col[r];
        }
    } else {
        for (int r = 0; r < rows; ++r) {
            const T* row = a.x + l0 + std::size_t(i0 + r) * a.ld;
            std::copy(row, row + ks, tile + r * kTile);
        }
    }
}

// B block (VNNI): tile[h * 512 + p * 32 + nn * 2 + e] = op(B)(l0 + 2p + e, j0 + 16h + nn).
template <typename T>
void gather_b(const OperandView<T>& b, int l0, int j0, T* tile) {
    const int ks = std::min(kTile, b.rows - l0), cols = std::min(kTile, b.cols - j0);
    std::fill(tile, tile + kStepElems, T(0));
    for (int c = 0; c < cols; ++c) {
        T* dst = tile + (c / 16) * kHalfElems + (c % 16) * 2;
        if (b.trans == 'N') {
            const T* col = b.x + l0 + std::size_t(j0 + c) * b.ld;  // contiguous in K
            for (int kk = 0; kk < ks; ++kk) dst[(kk / 2) * kTile + (kk % 2)] = col[kk];
        } else {
            for (int kk = 0; kk < ks; ++kk) dst[(kk / 2) * kTile + (kk % 2)] = b.x[j0 + c + std::size_t(l0 + kk) * b.ld];
        }
    }
}

// op(X)(r, c) of a complex view's complex matrix: its real and imaginary parts, the
// imaginary one negated for 'C'. The split is odd (split(-x) = -split(x): round to nearest
// even is symmetric), so negating before the split gives the slices of the negated value.
template <typename T>
inline void complex_at(const OperandView<T>& v, int r, int c, T* re, T* im) {
    const std::size_t e = v.trans == 'N' ? r + std::size_t(c) * v.ld : c + std::size_t(r) * v.ld;
    *re = v.x[2 * e];
    *im = v.trans == 'C' ? -v.x[2 * e + 1] : v.x[2 * e + 1];
}

// Complex A block: tile[r * 32 + kk] = op(A')(i0 + r, l0 + kk) (pack.h, Interleave), zeros past
// the edges. l0 and the depth 2k are even, so parts come in (Re, Im) pairs.
template <typename T>
void gather_complex_a(const OperandView<T>& a, int i0, int l0, T* tile) {
    const int rows = std::min(kTile, a.rows - i0), ks = std::min(kTile, a.cols - l0);
    std::fill(tile, tile + kStepElems, T(0));
    for (int r = 0; r < rows; ++r)
        for (int kk = 0; kk < ks; kk += 2) complex_at(a, i0 + r, (l0 + kk) / 2, &tile[r * kTile + kk], &tile[r * kTile + kk + 1]);
}

// Complex B block (VNNI, as gather_b): each complex op(B)(l, j) fills a 2 x 2 block of op(B'),
// [[Re, Im], [-Im, Re]]; l0 and j0 are even, so every 2 x 2 block lies in one tile.
template <typename T>
void gather_complex_b(const OperandView<T>& b, int l0, int j0, T* tile) {
    const int ks = std::min(kTile, b.rows - l0), cols = std::min(kTile, b.cols - j0);
    std::fill(tile, tile + kStepElems, T(0));
    auto at = [tile](int kk, int c) -> T& { return tile[(c / 16) * kHalfElems + (kk / 2) * kTile + (c % 16) * 2 + kk % 2]; };
    for (int c = 0; c < cols; c += 2)
        for (int kk = 0; kk < ks; kk += 2) {
            T re, im;
            complex_at(b, (l0 + kk) / 2, (j0 + c) / 2, &re, &im);
            at(kk, c) = re;
            at(kk + 1, c) = -im;
            at(kk, c + 1) = im;
            at(kk + 1, c + 1) = re;
        }
}

// One packed 2 KiB block written with non-temporal stores: no read of the destination lines
// before they are overwritten, and the block does not evict the data the pack still reads.
// SSE2 (every x86-64); dst is 64-byte aligned (blocks are 2 KiB apart from 64-byte aligned
// slices).
void stream_block(const bf16_t* src, bf16_t* dst) {
    const __m128i* s = reinterpret_cast<const __m128i*>(src);
    __m128i* d = reinterpret_cast<__m128i*>(dst);
    for (int q = 0; q < int(kStepElems * sizeof(bf16_t) / sizeof(__m128i)); ++q) _mm_stream_si128(d + q, _mm_load_si128(s + q));
}

std::size_t offset(const PackedOperand& out, int panel, int kstep) {
    return (std::size_t(panel) * out.ksteps + kstep) * kStepElems;
}

// The block order one thread walks: panel by panel (each panel's K steps in turn, so the
// packed buffer is written front to back), or, for the FP32 pack of a strided source (op(A)
// 'N', op(B) 'T'), K step by K step (the panels of one K step in turn, so each source column
// is read front to back instead of in 128-byte pieces a page apart). The FP64 pack reads
// 256-byte pieces, and for it the panel order is the faster one for both strided sources
// (amxblas_split_pack_phases 1024 3 2 11, FP64-6, 2 threads, side by side on the 2-core VM:
// fused op(B) 'T' 0.42-0.46 ms against 0.65-0.72, fused op(A) 'N' 0.52 against 0.72, and into
// buffers both threads had just read, NN A then B 1.80 against 2.04 ms; through amxblas_bench
// at N = 1024, 3 alternating runs: FP64-6 +3-7%, FP64-21 +4-22%). For FP32 it was not
// (same runs: FP32 -11% to +19%; an ad-hoc in-call probe: 7-25% slower), so the FP32 pack
// keeps it.
struct BlockOrder {
    int panels, ksteps;
    bool panel_inner;
    void at(int q, int* p, int* s) const {
        if (panel_inner) *p = q % panels, *s = q / panels;
        else *p = q / ksteps, *s = q % ksteps;
    }
};

template <bool IsA, typename T>
BlockOrder block_order(const OperandView<T>& x, const PackedOperand& out) {
    return {out.panels, out.ksteps, sizeof(T) == sizeof(float) && (x.trans == 'N') == IsA};
}

// A full block (panel p, K step s) of a real view: its corner in storage and how it lies
// (pack_gather.h); nullptr for an edge block (zero-padded) or a complex view's.
template <bool IsA, typename T>
const T* full_block(const OperandView<T>& x, int p, int s, BlockSource* kind) {
    const int i0 = p * kTile, l0 = s * kTile;
    const int outer = IsA ? x.rows : x.cols, kdim = IsA ? x.cols : x.rows;
    if (x.kind != Interleave::real || i0 + kTile > outer || l0 + kTile > kdim) return nullptr;
    // Column-major storage: op(X)(row, col) of 'N' is at x[row + col * ld], of 'T' at
    // x[col + row * ld]; for A, row = i and col = l; for B, row = l and col = j.
    const bool n = x.trans == 'N';
    const std::size_t ld = std::size_t(x.ld);
    *kind = IsA ? (n ? BlockSource::a_n : BlockSource::a_t) : (n ? BlockSource::b_n : BlockSource::b_t);
    return IsA ? (n ? x.x + i0 + l0 * ld : x.x + l0 + i0 * ld) : (n ? x.x + l0 + i0 * ld : x.x + i0 + l0 * ld);
}

// Gathers block (panel p, K step s) of op(X) into tile: a full block through the split table's
// gather, an edge block (zero-padded) through the generic loops above.
template <bool IsA, typename T>
void gather_block(const OperandView<T>& x, const SplitKernels& sk, int p, int s, T* tile) {
    BlockSource kind;
    if (const T* src = full_block<IsA>(x, p, s, &kind)) {
        if constexpr (sizeof(T) == 4) sk.gather_fp32(kind, src, std::size_t(x.ld), tile);
        else sk.gather_fp64(kind, src, std::size_t(x.ld), tile);
        return;
    }
    const int i0 = p * kTile, l0 = s * kTile;
    if (x.kind != Interleave::real) {
        if (IsA) gather_complex_a(x, i0, l0, tile);
        else gather_complex_b(x, l0, i0, tile);
    } else {
        if (IsA) gather_a(x, i0, l0, tile);
        else gather_b(x, l0, i0, tile);
    }
}

// Requests the source lines of a full block (32 runs of 32 values, ld apart: every
// BlockSource lies so) ahead of its gather; nothing for an edge or complex block.
template <bool IsA, typename T>
void prefetch_block(const OperandView<T>& x, const BlockOrder& order, int q) {
    int p, s;
    order.at(q, &p, &s);
    BlockSource kind;
    const T* src = full_block<IsA>(x, p, s, &kind);
    if (!src) return;
    for (int j = 0; j < kTile; ++j) {
        const char* run = reinterpret_cast<const char*>(src + std::size_t(j) * std::size_t(x.ld));
        for (int b = 0; b < int(kTile * sizeof(T)); b += 64) _mm_prefetch(run + b, _MM_HINT_T0);
    }
}

// body(q, participant) for every block q of the order, in runs of consecutive blocks per task
// so that each block's source can be requested while the one before is packed (the gathers
// read 32 runs a block, too many streams for the hardware prefetchers at large ld).
template <bool IsA, typename T, typename Body>
void for_each_packed_block(const OperandView<T>& x, const BlockOrder& order, int threads, Body&& body) {
    const int blocks = order.panels * order.ksteps;
    const int run = std::clamp(blocks / (16 * std::max(1, threads)), 1, 8);
    parallel_for(threads, (blocks + run - 1) / run, [&](int task, int who) {
        const int q0 = task * run, q1 = std::min(blocks, q0 + run);
        for (int q = q0; q < q1; ++q) {
            if (q + 1 < q1) prefetch_block<IsA>(x, order, q + 1);
            body(q, who);
        }
    });
}

template <bool IsA>
void pack_fp32(const OperandView<float>& x, const PackedOperand& out, const SplitKernels& sk, int threads) {
    if (out.geom != kAmxGeometry) return pack_fp32_generic(IsA, x, out, sk, threads);  // pack_generic.cc
    const BlockOrder order = block_order<IsA>(x, out);
    for_each_packed_block<IsA>(x, order, threads, [&](int q, int) {
        int p, s;
        order.at(q, &p, &s);
        const std::size_t o = offset(out, p, s);
        alignas(64) bf16_t staged[kFp32Slices][kStepElems];
        bf16_t* dst[kFp32Slices];
        for (int t = 0; t < kFp32Slices; ++t) dst[t] = out.stream ? staged[t] : out.slice[t] + o;
        BlockSource kind;
        if (const float* src = full_block<IsA>(x, p, s, &kind)) {
            sk.gather_split_fp32(kind, src, std::size_t(x.ld), dst[0], dst[1], dst[2]);
        } else {
            alignas(64) float tile[kStepElems];
            gather_block<IsA>(x, sk, p, s, tile);
            sk.fp32(tile, kStepElems, dst[0], dst[1], dst[2]);
        }
        if (!out.stream) return;
        for (int t = 0; t < kFp32Slices; ++t) stream_block(staged[t], out.slice[t] + o);
        _mm_sfence();  // this thread's streaming stores are visible before the compute reads them
    });
}

// One participant's part of a reduction, a cache line of its own (the FP64 pack's is in
// pack.h, shared with pack_generic.cc).
struct alignas(kCacheLine) AbsMaxPartial {
    double mx = 0;
    bool nonfinite = false;
};
struct alignas(kCacheLine) ExponentPartial {
    bool bad = false, any = false;
};

// 2^e, exactly (e >= -1074).
inline double pow2(int e) {
    if (e >= -1022 && e <= 1023) {
        const std::uint64_t bits = std::uint64_t(e + 1023) << 52;
        double p;
        std::memcpy(&p, &bits, sizeof p);
        return p;
    }
    return std::ldexp(1.0, e);
}

// The factors of rows (A) or columns (B) first .. first + count - 1 (split.h, BlockScale); 1
// past the edge.
void block_scale(const int* exps, int first, int count, BlockScale* bs) {
    bs->two_step = false;
    for (int r = 0; r < kTile; ++r) {
        const int e = r < count ? exps[first + r] : 0;
        bs->f1[r] = e >= -1023 ? pow2(-e) : pow2(1023);
        bs->f2[r] = e >= -1023 ? 1.0 : pow2(-e - 1023);
        bs->two_step = bs->two_step || e < -1023;
    }
}

// Adds each row's (A) or column's (B) sum of |normalised slice entry| of one packed block to
// norms[t * outer + first + r]. The block sums are exact in FP32 (32 multiples of 2^-8 of at
// most 1), and so are the FP64 totals, whatever order the threads add them in.
template <bool IsA>
void add_slice_norms(const bf16_t* const dst[kFp64Slices], int slices, int first, int count, int outer,
                     double* norms) {
    // |x| of a BF16 value as an FP32: the sign bit cleared, widened.
    const auto mag = [](bf16_t h) { return bits_float(std::uint32_t(h & 0x7FFF) << 16); };
    for (int t = 0; t < slices; ++t) {
        float sum[kTile] = {};
        const bf16_t* blk = dst[t];
        // Every partial sum is a multiple of 2^-8 of at most 32: exact in FP32, so the sums
        // may be taken in any order; these orders are the ones a compiler vectorises (no
        // reduction across a loop: lanes add lanes).
        if (IsA) {  // row r holds its 32 K values contiguously
            for (int r = 0; r < kTile; ++r) {
                float lane[kTile / 2];
                for (int c = 0; c < kTile / 2; ++c) lane[c] = mag(blk[r * kTile + c]) + mag(blk[r * kTile + kTile / 2 + c]);
                for (int w = kTile / 4; w >= 1; w /= 2)
                    for (int c = 0; c < w; ++c) lane[c] += lane[c + w];
                sum[r] = lane[0];
            }
        } else {  // each half: 16 rows of K pairs, column c at positions 2c and 2c + 1
            for (int h = 0; h < 2; ++h) {
                float lane[kTile] = {};
                for (int s = 0; s < kHalfElems / kTile; ++s)
                    for (int x = 0; x < kTile; ++x) lane[x] += mag(blk[h * kHalfElems + s * kTile + x]);
                for (int c = 0; c < kTile / 2; ++c) sum[h * (kTile / 2) + c] = lane[2 * c] + lane[2 * c + 1];
            }
        }
        for (int r = 0; r < count; ++r)
            if (sum[r] != 0) {
                // Exact sums: any interleaving of the threads' additions gives the same total.
                std::uint64_t* total = reinterpret_cast<std::uint64_t*>(&norms[std::size_t(t) * outer + first + r]);
                std::uint64_t old = __atomic_load_n(total, __ATOMIC_RELAXED), next;
                do {
                    double v;
                    std::memcpy(&v, &old, sizeof v);
                    v += double(sum[r]);
                    std::memcpy(&next, &v, sizeof next);
                } while (!__atomic_compare_exchange_n(total, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
            }
    }
}

int ceil_log2(double m) {  // m > 0 and finite
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
                ExponentScan* scan) {
    const int len = as_rows ? x.cols : x.rows;
    const std::size_t ld = std::size_t(x.ld);
    std::uint64_t m[kTile] = {};
    if (as_rows == (x.trans != 'N')) {  // each one a stored column
        for (int o = 0; o < n; ++o) m[o] = sk.absbits_max(x.x + std::size_t(o0 + o) * ld, std::size_t(len));
    } else {
        sk.absbits_max_lanes(x.x + o0, ld, len, n, m);
    }
    for (int o = 0; o < n; ++o) scan->record(o0 + o, m[o], who);
}

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
GuessScratch& guess_scratch() {
    thread_local GuessScratch s;
    return s;
}

// Splits and packs op(X), scaled by exps (nullptr: unscaled), with the scales sc; resid_max:
// nullptr, or where to gather max |X^(t)|, t = 0..sc.slices (SplitKernels::fp64).
// norms, subnormal: optional, see Fp64Split.
//
// With scan (real views only), the exponents exps are found here: each task takes a whole
// panel, scans its rows (columns) into exps and then packs its blocks while their source is
// still in cache, so op(X) is read from memory once instead of twice.
template <bool IsA>
const char* pack_fp64(const OperandView<double>& x, const int* exps, const Fp64Scales& sc, const PackedOperand& out,
                      const SplitKernels& sk, int threads, double* resid_max = nullptr, double* norms = nullptr,
                      bool* subnormal = nullptr, ExponentScan* scan = nullptr, const int* guess = nullptr) {
    if (out.geom != kAmxGeometry)  // pack_generic.cc; scan_split_pack asks for no scan nor guess then
        return pack_fp64_generic(IsA, x, exps, sc, out, sk, threads, resid_max, norms, subnormal);
    if (norms) std::fill(norms, norms + std::size_t(sc.slices) * (IsA ? x.rows : x.cols), 0.0);
    const BlockOrder order = block_order<IsA>(x, out);
    const int outer = IsA ? x.rows : x.cols;
    const int participants = std::max(1, threads);
    // With guess: one partial per participant and panel (a panel packed again replaces its
    // own), and each participant's maxima of the rows' |x| patterns.
    PerParticipant<Fp64PackPartial>& part = guess_scratch().partials;
    part.assign(guess ? std::size_t(participants) * out.panels : std::size_t(participants), Fp64PackPartial{});
    std::vector<std::uint64_t>& rowmax = guess_scratch().rowmax;
    if (guess) rowmax.assign(std::size_t(participants) * outer, 0);
    const int* use_exps = guess ? guess : exps;
    const auto pack_block = [&](int p, int s, int who) {
        Fp64PackPartial& mine = part[guess ? std::size_t(who) * out.panels + p : std::size_t(who)];
        alignas(64) double tile[kStepElems];
        const int count = std::min(kTile, outer - p * kTile);
        BlockSource kind;
        const double* src = full_block<IsA>(x, p, s, &kind);
        std::uint64_t* mine_max = guess ? rowmax.data() + std::size_t(who) * outer + p * kTile : nullptr;
        if (guess && !src) {  // op(A) = A (guess_row_exponents): the block's rows lie in its columns
            const int l0 = s * kTile;
            sk.absbits_max_lanes(x.x + p * kTile + std::size_t(l0) * std::size_t(x.ld), std::size_t(x.ld),
                                 std::min(kTile, x.cols - l0), count, mine_max);
        }
        if (use_exps) {
            BlockScale bs;
            block_scale(use_exps, p * kTile, count, &bs);
            // A full block with guess (kind a_n): its rows' maxima taken as it is gathered.
            const bool sub = src && guess ? sk.gather_scale_rowmax_fp64(src, std::size_t(x.ld), bs, tile, mine_max)
                             : src        ? sk.gather_scale_fp64(kind, src, std::size_t(x.ld), IsA, bs, tile)
                                          : (gather_block<IsA>(x, sk, p, s, tile), sk.scale_fp64(IsA, bs, tile));
            mine.subnormal = sub || mine.subnormal;
        } else {
            gather_block<IsA>(x, sk, p, s, tile);
        }
        const std::size_t o = offset(out, p, s);
        bf16_t* dst[kFp64Slices] = {};
        for (int t = 0; t < sc.slices; ++t) dst[t] = out.slice[t] + o;
        const SliceStatus st = sk.fp64(tile, kStepElems, sc, dst, resid_max ? mine.mx : nullptr);
        mine.worst = std::max(mine.worst, static_cast<int>(st));
        if (norms) add_slice_norms<IsA>(dst, sc.slices, p * kTile, count, outer, norms);
    };
    if (scan && !guess) {
        parallel_for(threads, out.panels, [&](int p, int who) {
            scan_panel(x, IsA, sk, p * kTile, std::min(kTile, outer - p * kTile), who, scan);
            for (int s = 0; s < out.ksteps; ++s) {
                if (s + 1 < out.ksteps) prefetch_block<IsA>(x, BlockOrder{out.panels, out.ksteps, false}, p * out.ksteps + s + 1);
                pack_block(p, s, who);
            }
        });
    } else {
        for_each_packed_block<IsA>(x, order, threads, [&](int q, int who) {
            int p, s;
            order.at(q, &p, &s);
            pack_block(p, s, who);
        });
    }
    if (guess) {
        // The rows' exponents from the maxima just taken; a panel with a row whose guess was
        // not its exponent is packed again with the exponents (its partials and norms first
        // cleared): then every block is the block the exponents give.
        for (int o = 0; o < outer; ++o) {
            std::uint64_t mo = rowmax[o];
            for (int w = 1; w < participants; ++w) mo = std::max(mo, rowmax[std::size_t(w) * outer + o]);
            scan->record(o, mo, 0);
        }
        std::vector<int>& again = guess_scratch().again;
        again.clear();
        if (!scan->bad())
            for (int p = 0; p < out.panels; ++p) {
                const int first = p * kTile, count = std::min(kTile, outer - first);
                if (!std::equal(exps + first, exps + first + count, guess + first)) again.push_back(p);
            }
        if (!again.empty()) {
            use_exps = exps;
            for (int p : again) {
                for (int w = 0; w < participants; ++w) part[std::size_t(w) * out.panels + p] = Fp64PackPartial{};
                const int first = p * kTile, count = std::min(kTile, outer - first);
                if (norms)
                    for (int t = 0; t < sc.slices; ++t) std::fill_n(norms + std::size_t(t) * outer + first, count, 0.0);
            }
            parallel_for(threads, int(again.size()) * out.ksteps,
                         [&](int q, int who) { pack_block(again[q / out.ksteps], q % out.ksteps, who); });
        }
    }
    return fold_fp64_partials(part, resid_max, subnormal);
}

}  // namespace

void pack_a_fp32(const OperandView<float>& a, const PackedOperand& out, const SplitKernels& sk, int threads) {
    pack_fp32<true>(a, out, sk, threads);
}

void pack_b_fp32(const OperandView<float>& b, const PackedOperand& out, const SplitKernels& sk, int threads) {
    pack_fp32<false>(b, out, sk, threads);
}

std::size_t streaming_threshold_bytes() {
    static const std::size_t t = [] {
        const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        return llc > 0 ? std::size_t(llc) : std::size_t(32) << 20;
    }();
    return t;
}

namespace {

// The sequential reduction passes r = sc->active .. sc->slices - 1 over an unscaled operand
// (each needs the scales before it), stopping at a zero residual or one below
// 2^kFp64MinSliceExp.
const char* scale_passes(const OperandView<double>& x, const SplitKernels& sk, int threads, Fp64Scales* sc) {
    // The max is over op(X) as a whole, so the stored columns can be scanned as they lie. The
    // entries of a complex view's op(X') are the parts of the stored ones, some negated: the
    // same magnitudes, and a stored complex column of n entries is 2n contiguous parts.
    const bool by_cols = x.trans == 'N';
    int len = by_cols ? x.rows : x.cols;    // contiguous run
    int runs = by_cols ? x.cols : x.rows;
    std::size_t ld = std::size_t(x.ld);
    if (x.kind != Interleave::real) {
        const int crows = x.kind == Interleave::complex_a ? x.rows : x.rows / 2, ccols = x.cols / 2;
        len = 2 * (by_cols ? crows : ccols);
        runs = by_cols ? ccols : crows;
        ld *= 2;
    }
    for (int r = sc->active; r < sc->slices; ++r) {
        PerParticipant<AbsMaxPartial> part(std::max(1, threads));
        parallel_for(threads, runs, [&](int j, int who) {
            const AbsMax m = sk.fp64_absmax(x.x + std::size_t(j) * ld, std::size_t(len), *sc, r);
            part[who].mx = std::max(part[who].mx, m.value);
            part[who].nonfinite = part[who].nonfinite || m.nonfinite;
        });
        double mx = 0;
        bool nonfinite = false;
        for (const AbsMaxPartial& pp : part) {
            mx = std::max(mx, pp.mx);
            nonfinite = nonfinite || pp.nonfinite;
        }
        if (nonfinite) return reason::domain_nonfinite;
        if (mx == 0 || ceil_log2(mx) < kFp64MinSliceExp) break;  // the chain ends here
        sc->sigma[r] = ozaki_sigma(mx);
        sc->active = r + 1;
    }
    set_slice_norms(sc);
    return nullptr;
}

// Speculative scales: v(0) = 0 (every nonzero scaled row or column has max |x| in (1/2, 1]),
// then v(t) = v(t-1) - 9, what a residual that keeps 9 bits per slice gives (fact (b) of
// docs/fp64-certificate.md bounds it from above; dense data meets it). One tracked pack with
// those scales measures max |X^(t)| under them; scale t is confirmed when ozaki_sigma() of that
// max is the guess, and then max |X^(t+1)| was measured under true scales too. A zero max, or
// one below 2^kFp64MinSliceExp, ends the chain. Every confirmed pack is the pack the exact
// scales give, bit for bit: same arithmetic, and slices past the chain's end are splits of a
// zero residual, +0 under any scale. A refuted guess t is replaced by the measured (exact)
// scale and the operand is packed again: at most sc.slices packs, one on dense data.
//
// With scan, exps are found by the first pack (pack_fp64), which speculates that op(X) is
// nonzero; if it was all zero, that pack wrote the zero slices the exact (empty) scales give,
// and only the scales are reset. With exp_guess too, that first pack scales by the guessed
// exponents and packs again the panels whose guess was wrong (pack_fp64).
template <bool IsA>
const char* split_pack(const OperandView<double>& x, const int* exps, bool nonzero, Fp64Split* sp,
                       const PackedOperand& out, const SplitKernels& sk, int threads, ExponentScan* scan = nullptr,
                       const int* exp_guess = nullptr) {
    if (scan) nonzero = true;
    Fp64Scales& sc = sp->sc;
    sc = Fp64Scales{};
    sc.slices = out.slices;
    int known = 0;  // scales 0..known-1 are exact
    if (nonzero) {
        sc.sigma[0] = ozaki_sigma(1.0);
        known = 1;
    }
    bool closed = !nonzero;  // the chain ends at `known`
    for (;;) {
        Fp64Scales guess = sc;
        guess.active = known;
        while (!closed && guess.active < guess.slices) {
            const int v = ozaki_v(guess.sigma[guess.active - 1]) - 9;
            if (v < kFp64MinSliceExp) break;
            guess.sigma[guess.active] = std::ldexp(0.75, v + kOzakiRho);
            ++guess.active;
        }
        set_slice_norms(&guess);
        const char* why =
            pack_fp64<IsA>(x, exps, guess, out, sk, threads, sp->resid, sp->norms, &sp->subnormal_scaled, scan, exp_guess);
        if (scan) {
            if (scan->bad()) return reason::domain_nonfinite;
            const bool any = scan->any();
            scan = nullptr;
            exp_guess = nullptr;
            if (!any) {
                sc = Fp64Scales{};
                sc.slices = out.slices;
                set_slice_norms(&sc);
                return why;
            }
        }
        int t = known;
        while (t < guess.active && sp->resid[t] != 0 && ozaki_sigma(sp->resid[t]) == guess.sigma[t]) ++t;
        if (closed || t == guess.active || sp->resid[t] == 0) {
            sc = guess;
            sc.active = t;
            set_slice_norms(&sc);
            return why;
        }
        for (int r = known; r <= t; ++r) sc.sigma[r] = guess.sigma[r];
        sc.sigma[t] = ozaki_sigma(sp->resid[t]);  // measured under confirmed scales: exact
        if (ozaki_v(sc.sigma[t]) < kFp64MinSliceExp) {
            known = t;
            closed = true;
        } else {
            known = t + 1;
        }
    }
}

// A complex view's rows of op(A') (complex_a) are op(A)'s rows, its columns 2j and 2j + 1 of
// op(B') (complex_b) both hold the parts of op(B)'s column j: each gets the exponent of the
// largest part of that complex row or column.
const char* complex_outer_exponents(const OperandView<double>& x, bool as_rows, int threads, int* exps, bool* nonzero,
                                    unsigned char* zero) {
    const bool is_a = x.kind == Interleave::complex_a;
    const int crows = is_a ? x.rows : x.rows / 2, ccols = x.cols / 2;
    const int couter = as_rows ? crows : ccols, clen = as_rows ? ccols : crows;
    const int per = (is_a && as_rows) ? 1 : 2;  // op(X') rows or columns per complex one
    PerParticipant<ExponentPartial> part(std::max(1, threads));
    parallel_for(threads, couter, [&](int o, int who) {
        double m = 0;
        bool nf = false;
        for (int l = 0; l < clen; ++l) {
            const int r = as_rows ? o : l, c = as_rows ? l : o;
            const std::size_t e = x.trans == 'N' ? r + std::size_t(c) * x.ld : c + std::size_t(r) * x.ld;
            for (int h = 0; h < 2; ++h) {
                const double a = std::fabs(x.x[2 * e + h]);
                nf = nf || !(a <= DBL_MAX);
                m = a > m ? a : m;
            }
        }
        part[who].bad = part[who].bad || nf;
        part[who].any = part[who].any || m > 0;
        for (int q = 0; q < per; ++q) {
            exps[o * per + q] = m > 0 ? ceil_log2(m) : 0;
            if (zero) zero[o * per + q] = m == 0;
        }
    });
    bool bad = false, any = false;
    for (const ExponentPartial& pp : part) {
        bad = bad || pp.bad;
        any = any || pp.any;
    }
    *nonzero = any;
    return bad ? reason::domain_nonfinite : nullptr;
}

}  // namespace

const char* fp64_outer_exponents(const OperandView<double>& x, bool as_rows, int threads, int* exps, bool* nonzero,
                                 unsigned char* zero) {
    if (x.kind != Interleave::real) return complex_outer_exponents(x, as_rows, threads, exps, nonzero, zero);
    const int outer = as_rows ? x.rows : x.cols, len = as_rows ? x.cols : x.rows;
    // op(X)'s rows are stored columns when transposed; op(X)'s columns are stored columns when not.
    const bool contiguous = as_rows == (x.trans != 'N');
    const std::size_t ld = std::size_t(x.ld);
    const SplitKernels& sk = split_kernels();
    ExponentScan scan(exps, zero, threads);
    const auto record = [&](int o, std::uint64_t m, int who) { scan.record(o, m, who); };
    if (contiguous) {
        parallel_for(threads, outer, [&](int o, int who) { record(o, sk.absbits_max(x.x + std::size_t(o) * ld, len), who); });
    } else {
        // Each stored column is read front to back into per-participant maxima of kRows outer
        // indices (16 KiB: in L1), kCols columns a task.
        constexpr int kRows = 2048, kCols = 32;
        const int row_chunks = (outer + kRows - 1) / kRows, col_chunks = (len + kCols - 1) / kCols;
        const int participants = std::max(1, std::min(threads, row_chunks * col_chunks));
        std::vector<std::uint64_t> m(std::size_t(participants) * outer, 0);
        parallel_for(threads, row_chunks * col_chunks, [&](int c, int who) {
            const int o0 = (c % row_chunks) * kRows, l0 = (c / row_chunks) * kCols;
            sk.absbits_max_lanes(x.x + o0 + std::size_t(l0) * ld, ld, std::min(kCols, len - l0), std::min(kRows, outer - o0),
                                 m.data() + std::size_t(who) * outer + o0);
        });
        for (int o = 0; o < outer; ++o) {
            std::uint64_t mo = m[o];
            for (int w = 1; w < participants; ++w) mo = std::max(mo, m[std::size_t(w) * outer + o]);
            record(o, mo, 0);
        }
    }
    *nonzero = scan.any();
    return scan.bad() ? reason::domain_nonfinite : nullptr;
}

const char* split_pack_a_fp64(const OperandView<double>& a, const int* row_exps, bool nonzero, Fp64Split* sp,
                              const PackedOperand& out, const SplitKernels& sk, int threads) {
    return split_pack<true>(a, row_exps, nonzero, sp, out, sk, threads);
}

const char* split_pack_b_fp64(const OperandView<double>& b, const int* col_exps, bool nonzero, Fp64Split* sp,
                              const PackedOperand& out, const SplitKernels& sk, int threads) {
    return split_pack<false>(b, col_exps, nonzero, sp, out, sk, threads);
}

namespace {

// op(A) = A stored by columns: a row's exponent needs all of its K values, which lie across
// every stored column, so a scan before the pack reads A twice. Instead the pack can scale by
// guessed exponents, take the rows' true maxima from the blocks it gathers, and pack again the
// few panels whose guess was wrong (pack_fp64). The guess: each row's exponent over three
// samples of 32 columns, the first, the middle and the last; taken when k >= 4 * 32 and the
// samples agree on at least 15/16 of the rows (dense data of one scale, where the whole row's
// exponent is the samples' one), else nothing (false): spread data would repack too many.
// (Data that agrees in the samples and is larger between them for many rows, all panels packed
// twice, is the worst case: about one extra pack of op(A), against the scan it saves.)
bool guess_row_exponents(const OperandView<double>& a, const SplitKernels& sk, int threads, std::vector<int>* guess) {
    const int m = a.rows, k = a.cols;
    if (k < 4 * kTile || m < kTile) return false;
    const std::size_t ld = std::size_t(a.ld);
    constexpr int kSamples = 3;
    const int at[kSamples] = {0, (k / 2) / kTile * kTile, k - kTile};
    std::vector<std::uint64_t>& mx = guess_scratch().samples;
    mx.assign(std::size_t(kSamples) * m, 0);
    constexpr int kRows = 2048;
    parallel_for(threads, (m + kRows - 1) / kRows, [&](int c, int) {
        const int o0 = c * kRows, n = std::min(kRows, m - o0);
        for (int q = 0; q < kSamples; ++q)
            sk.absbits_max_lanes(a.x + o0 + std::size_t(at[q]) * ld, ld, kTile, n, mx.data() + std::size_t(q) * m + o0);
    });
    guess->resize(std::size_t(m));
    int differ = 0;
    for (int o = 0; o < m; ++o) {
        int e[kSamples];
        for (int q = 0; q < kSamples; ++q) {
            const std::uint64_t b = mx[std::size_t(q) * m + o];
            if (b == 0 || b >= kF64InfBits) return false;
            double d;
            std::memcpy(&d, &b, sizeof d);
            e[q] = ceil_log2(d);
        }
        differ += e[0] != e[1] || e[1] != e[2];
        (*guess)[o] = std::max({e[0], e[1], e[2]});
    }
    return differ * 16 <= m;
}

template <bool IsA>
const char* scan_split_pack(const OperandView<double>& x, int* exps, unsigned char* zero, bool* nonzero, Fp64Split* sp,
                            const PackedOperand& out, const SplitKernels& sk, int threads) {
    // Fused only where the pack walks the panels one after another anyway (op(A) stored by
    // rows, op(B) by columns: each panel is 32 contiguous runs); elsewhere a panel's blocks lie
    // across the columns of all of op(X), and taking them panel by panel costs more in pages
    // than the second read saves.
    // The scan and the guessed exponents run inside the fast path only (kAmxGeometry); the
    // generic pack (pack_generic.cc) takes the two calls.
    const bool fast = out.geom == kAmxGeometry;
    if (x.kind != Interleave::real || (x.trans == 'N') == IsA || !fast) {
        if (IsA && x.kind == Interleave::real && fast) {
            std::vector<int>& guess = guess_scratch().guess;
            if (guess_row_exponents(x, sk, threads, &guess)) {
                ExponentScan scan(exps, zero, threads);
                const char* why = split_pack<IsA>(x, exps, true, sp, out, sk, threads, &scan, guess.data());
                *nonzero = scan.any();
                return scan.bad() ? reason::domain_nonfinite : why;
            }
        }
        if (const char* why = fp64_outer_exponents(x, IsA, threads, exps, nonzero, zero)) return why;
        return split_pack<IsA>(x, exps, *nonzero, sp, out, sk, threads);
    }
    ExponentScan scan(exps, zero, threads);
    const char* why = split_pack<IsA>(x, exps, true, sp, out, sk, threads, &scan);
    *nonzero = scan.any();
    return scan.bad() ? reason::domain_nonfinite : why;
}

}  // namespace

const char* scan_split_pack_a_fp64(const OperandView<double>& a, int* row_exps, unsigned char* zero, bool* nonzero,
                                   Fp64Split* sp, const PackedOperand& out, const SplitKernels& sk, int threads) {
    return scan_split_pack<true>(a, row_exps, zero, nonzero, sp, out, sk, threads);
}

const char* scan_split_pack_b_fp64(const OperandView<double>& b, int* col_exps, unsigned char* zero, bool* nonzero,
                                   Fp64Split* sp, const PackedOperand& out, const SplitKernels& sk, int threads) {
    return scan_split_pack<false>(b, col_exps, zero, nonzero, sp, out, sk, threads);
}

const char* fp64_scales(const OperandView<double>& x, const SplitKernels& sk, int threads, int slices, Fp64Scales* sc) {
    *sc = Fp64Scales{};
    sc->slices = slices;
    return scale_passes(x, sk, threads, sc);
}

const char* pack_a_fp64(const OperandView<double>& a, const int* row_exps, const Fp64Scales& sc,
                        const PackedOperand& out, const SplitKernels& sk, int threads) {
    return pack_fp64<true>(a, row_exps, sc, out, sk, threads);
}

const char* pack_b_fp64(const OperandView<double>& b, const int* col_exps, const Fp64Scales& sc,
                        const PackedOperand& out, const SplitKernels& sk, int threads) {
    return pack_fp64<false>(b, col_exps, sc, out, sk, threads);
}

}  // namespace amxblas::kernels

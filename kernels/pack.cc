// Fused split + pack. Each output block is gathered from op(X) into a 1024-value staging tile
// already in the packed order (with zeros past the matrix edge); the split then runs over that
// contiguous tile and writes every slice straight into its packed buffer.
#include "kernels/pack.h"
#include "kernels/reasons.h"

#include <emmintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/thread_pool.h"

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

// The block order one thread walks. Blocks that share their source columns (op(A) 'N': the
// panels of one K step; op(B) 'T': the panels of one K step) are taken one after another, so
// each strided source column is read front to back instead of in 128-byte pieces a page apart.
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
    return {out.panels, out.ksteps, (x.trans == 'N') == IsA};
}

// Gathers block (panel p, K step s) of op(X) into tile: a full block through the split table's
// gather, an edge block (zero-padded) through the generic loops above.
template <bool IsA, typename T>
void gather_block(const OperandView<T>& x, const SplitKernels& sk, int p, int s, T* tile) {
    const int i0 = p * kTile, l0 = s * kTile;
    if (x.kind != Interleave::real) {
        if (IsA) gather_complex_a(x, i0, l0, tile);
        else gather_complex_b(x, l0, i0, tile);
        return;
    }
    const int outer = IsA ? x.rows : x.cols, kdim = IsA ? x.cols : x.rows;
    if (i0 + kTile > outer || l0 + kTile > kdim) {
        if (IsA) gather_a(x, i0, l0, tile);
        else gather_b(x, l0, i0, tile);
        return;
    }
    // Column-major storage: op(X)(row, col) of 'N' is at x[row + col * ld], of 'T' at
    // x[col + row * ld]; for A, row = i and col = l; for B, row = l and col = j.
    const bool n = x.trans == 'N';
    const std::size_t ld = std::size_t(x.ld);
    const T* src = IsA ? (n ? x.x + i0 + l0 * ld : x.x + l0 + i0 * ld) : (n ? x.x + l0 + i0 * ld : x.x + i0 + l0 * ld);
    const BlockSource kind = IsA ? (n ? BlockSource::a_n : BlockSource::a_t) : (n ? BlockSource::b_n : BlockSource::b_t);
    if constexpr (sizeof(T) == 4) sk.gather_fp32(kind, src, ld, tile);
    else sk.gather_fp64(kind, src, ld, tile);
}

template <bool IsA>
void pack_fp32(const OperandView<float>& x, const PackedOperand& out, const SplitKernels& sk, int threads) {
    const BlockOrder order = block_order<IsA>(x, out);
    const int blocks = out.panels * out.ksteps;
    parallel_for(threads, blocks, [&](int q, int) {
        int p, s;
        order.at(q, &p, &s);
        alignas(64) float tile[kStepElems];
        gather_block<IsA>(x, sk, p, s, tile);
        const std::size_t o = offset(out, p, s);
        if (!out.stream) {
            sk.fp32(tile, kStepElems, out.slice[0] + o, out.slice[1] + o, out.slice[2] + o);
            return;
        }
        alignas(64) bf16_t staged[kFp32Slices][kStepElems];
        sk.fp32(tile, kStepElems, staged[0], staged[1], staged[2]);
        for (int t = 0; t < kFp32Slices; ++t) stream_block(staged[t], out.slice[t] + o);
        _mm_sfence();  // this thread's streaming stores are visible before the compute reads them
    });
}

// One participant's part of a reduction, a cache line of its own.
struct alignas(64) Fp64PackPartial {
    int worst = 0;
    double mx[kFp64Slices] = {};
};
struct alignas(64) AbsMaxPartial {
    double mx = 0;
    bool nonfinite = false;
};

// resid_max: nullptr, or where to gather max |X^(t)| per slice (fp64_tracked).
template <bool IsA>
const char* pack_fp64(const OperandView<double>& x, const Fp64Scales& sc, const PackedOperand& out,
                      const SplitKernels& sk, int threads, double* resid_max = nullptr) {
    const BlockOrder order = block_order<IsA>(x, out);
    const int blocks = out.panels * out.ksteps;
    std::vector<Fp64PackPartial> part(std::max(1, threads));
    parallel_for(threads, blocks, [&](int q, int who) {
        int p, s;
        order.at(q, &p, &s);
        alignas(64) double tile[kStepElems];
        gather_block<IsA>(x, sk, p, s, tile);
        const std::size_t o = offset(out, p, s);
        bf16_t* const dst[kFp64Slices] = {out.slice[0] + o, out.slice[1] + o, out.slice[2] + o,
                                          out.slice[3] + o, out.slice[4] + o, out.slice[5] + o};
        Fp64PackPartial& mine = part[who];
        const SliceStatus st =
            resid_max ? sk.fp64_tracked(tile, kStepElems, sc, dst, mine.mx) : sk.fp64(tile, kStepElems, sc, dst);
        mine.worst = std::max(mine.worst, static_cast<int>(st));
    });
    int worst = 0;
    double mx[kFp64Slices] = {};
    for (const Fp64PackPartial& pp : part) {
        worst = std::max(worst, pp.worst);
        for (int t = 0; t < kFp64Slices; ++t) mx[t] = std::max(mx[t], pp.mx[t]);
    }
    if (resid_max) std::copy(mx, mx + kFp64Slices, resid_max);
    switch (static_cast<SliceStatus>(worst)) {
        case SliceStatus::ok: return nullptr;
        case SliceStatus::subnormal: return reason::domain_slice_subnormal;
        case SliceStatus::overflow: return reason::domain_slice_overflow;
    }
    return reason::domain_slice_subnormal;
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

const char* pack_a_fp64(const OperandView<double>& a, const Fp64Scales& sc, const PackedOperand& out,
                        const SplitKernels& sk, int threads) {
    return pack_fp64<true>(a, sc, out, sk, threads);
}

const char* pack_b_fp64(const OperandView<double>& b, const Fp64Scales& sc, const PackedOperand& out,
                        const SplitKernels& sk, int threads) {
    return pack_fp64<false>(b, sc, out, sk, threads);
}

namespace {

// The reduction passes r = sc->active .. last - 1 (each needs the scales before it), stopping
// at a zero residual.
const char* scale_passes(const OperandView<double>& x, const SplitKernels& sk, int threads, int last, Fp64Scales* sc) {
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
    for (int r = sc->active; r < last; ++r) {
        std::vector<AbsMaxPartial> part(std::max(1, threads));
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
        if (mx == 0) break;  // the residual is zero: this and all later slices are zero
        sc->sigma[r] = ozaki_sigma(mx);
        sc->active = r + 1;
    }
    return nullptr;
}

// The scales after the first, speculatively: v(t) = v(t-1) - 9 is what a residual that keeps
// 9 bits per slice gives (fact (b) of policy/domain.h is the bound; dense data meets it).
// One tracked pack with those scales measures max |X^(t)| under them; scale t is confirmed when
// ozaki_sigma() of that max is the guess (then max |X^(t+1)| was measured under the true
// scales too), and a zero max ends the chain. Every confirmed pack is the pack the exact scales
// give, bit for bit: same arithmetic, and slices past the chain are zero residuals, which split
// to +0 without a flag under any finite scale. Otherwise the scales found are kept, the
// remaining ones come from the sequential passes, and the operand is packed again.
template <bool IsA>
const char* pack_fp64_scaled(const OperandView<double>& x, Fp64Scales* sc, const PackedOperand& out,
                             const SplitKernels& sk, int threads) {
    if (sc->active == 1) {
        Fp64Scales guess = *sc;
        bool usable = true;
        for (int t = 1; t < kFp64Slices; ++t) {
            guess.sigma[t] = guess.sigma[t - 1] * 0x1p-9;
            usable = usable && std::isnormal(guess.sigma[t]) && std::isnormal(guess.sigma[0]);
        }
        guess.active = kFp64Slices;
        if (usable) {
            double mx[kFp64Slices];
            const char* why = pack_fp64<IsA>(x, guess, out, sk, threads, mx);
            int t = 1;
            while (t < kFp64Slices && mx[t] != 0 && ozaki_sigma(mx[t]) == guess.sigma[t]) ++t;
            if (t == kFp64Slices || mx[t] == 0) {
                for (int r = 1; r < t; ++r) sc->sigma[r] = guess.sigma[r];
                sc->active = t;
                return why;
            }
            for (int r = 1; r < t; ++r) sc->sigma[r] = guess.sigma[r];
            sc->sigma[t] = ozaki_sigma(mx[t]);  // measured under confirmed scales: exact
            sc->active = t + 1;
        }
    }
    if (sc->active > 0)
        if (const char* why = scale_passes(x, sk, threads, kFp64Slices, sc)) return why;
    return pack_fp64<IsA>(x, *sc, out, sk, threads);
}

}  // namespace

const char* fp64_scales(const OperandView<double>& x, const SplitKernels& sk, int threads, Fp64Scales* sc) {
    *sc = Fp64Scales{};
    return scale_passes(x, sk, threads, kFp64Slices, sc);
}

const char* fp64_first_scale(const OperandView<double>& x, const SplitKernels& sk, int threads, Fp64Scales* sc) {
    *sc = Fp64Scales{};
    return scale_passes(x, sk, threads, 1, sc);
}

const char* split_pack_a_fp64(const OperandView<double>& a, Fp64Scales* sc, const PackedOperand& out,
                              const SplitKernels& sk, int threads) {
    return pack_fp64_scaled<true>(a, sc, out, sk, threads);
}

const char* split_pack_b_fp64(const OperandView<double>& b, Fp64Scales* sc, const PackedOperand& out,
                              const SplitKernels& sk, int threads) {
    return pack_fp64_scaled<false>(b, sc, out, sk, threads);
}

}  // namespace amxblas::kernels

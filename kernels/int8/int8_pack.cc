#include "kernels/int8/int8_pack.h"

#include <cmath>

#include "kernels/common/pow2.h"
#include "kernels/isa/isa.h"
#include "kernels/pack/operand_element.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

constexpr TileGeometry g = kAmxInt8Geometry;
constexpr int kBlockValues = detail::kInt8BlockValues;  // one packed block of A or of B
static_assert(g.mr * g.kstep == kBlockValues && g.nr * g.kstep == kBlockValues, "the loops' block");
static_assert(g.mr == detail::kInt8BlockOuter && g.nr == detail::kInt8BlockOuter && g.kstep == detail::kInt8BlockDepth &&
                  g.nr_vnni == detail::kInt8QuadColumns,
              "the loops' gather_full");

// Where row (A) or column (B) o of a panel and K index kk of a K step go in a block.
inline int position(bool is_a, int o, int kk) {
    return is_a ? o * g.kstep + kk
                : (o / g.nr_vnni) * (g.kstep * g.nr_vnni) + (kk / 4) * (4 * g.nr_vnni) + (o % g.nr_vnni) * 4 + kk % 4;
}

// 2^shift[o - panel start] per row (column) of block (panel p, K step s), into scale; where the
// block is whole, of a real operand stored untransposed (op(X) = X) and every 2^shift a normal
// double, the address of its first value (row or column o, K index l at base[o + l ld] for A,
// base[o ld + l] for B), which the loops' whole-block gathers read; else nullptr.
const double* whole_block(bool is_a, const OperandView<double>& x, int o0, int outer, int k0, int kc, int p, int s,
                          const int* shift, double* scale, bool* exotic) {
    const int tile = is_a ? g.mr : g.nr;
    *exotic = false;
    for (int oo = 0; oo < tile; ++oo) {
        const bool in_range = shift[oo] >= -1022 && shift[oo] <= 1023;
        scale[oo] = in_range ? pow2(shift[oo]) : 0.0;
        *exotic = *exotic || !in_range;
    }
    const int ob = p * tile, lb = s * g.kstep;
    const bool outer_contiguous = x.kind == Interleave::real && (is_a ? x.trans == 'N' : x.trans != 'N');
    if (x.kind != Interleave::real || *exotic || outer - ob < tile || kc - lb < g.kstep || outer_contiguous != is_a)
        return nullptr;
    const std::size_t ld = std::size_t(x.ld);
    return is_a ? x.x + std::size_t(o0 + ob) + std::size_t(k0 + lb) * ld
                : x.x + std::size_t(o0 + ob) * ld + std::size_t(k0 + lb);
}

// Gathers block (panel p, K step s) of the chunk into v in packed order, each row (column) o
// multiplied by 2^shift[o - panel start] (zero past the edges). Scaling by a power of two is
// exact unless the result falls below 2^-1022; then it is below 1/2 in magnitude and rounds to
// 0 either way. Rows whose 2^shift is outside FP64's range take std::ldexp per value.
void gather_scaled(bool is_a, const OperandView<double>& x, int o0, int outer, int k0, int kc, int p, int s,
                   const int* shift, double* v) {
    const int tile = is_a ? g.mr : g.nr;
    double scale[g.mr];
    bool exotic = false;
    const double* whole = whole_block(is_a, x, o0, outer, k0, kc, p, s, shift, scale, &exotic);
    const auto gather_full = isa_kernels().int8_residues->gather_full;
    if (whole && gather_full) {
        gather_full(is_a, whole, std::size_t(x.ld), scale, v);
        return;
    }
    const int ob = p * tile, lb = s * g.kstep;
    const int orows = std::min(tile, outer - ob), kcols = std::min(g.kstep, kc - lb);
    if (orows < tile || kcols < g.kstep)  // a whole block writes every value below
        for (int i = 0; i < kBlockValues; ++i) v[i] = 0.0;
    // The storage order of op(X)'s rows (A) or columns (B) decides which loop is inner.
    const bool outer_contiguous = x.kind == Interleave::real && (is_a ? x.trans == 'N' : x.trans != 'N');
    const auto load = [&](int oo, int kk) {
        const int o = o0 + ob + oo, l = k0 + lb + kk;
        return is_a ? element(x, o, l) : element(x, l, o);
    };
    const auto put = [&](int oo, int kk) {
        const double val = load(oo, kk);
        v[position(is_a, oo, kk)] = exotic && scale[oo] == 0.0 ? std::ldexp(val, shift[oo]) : val * scale[oo];
    };
    if (x.kind == Interleave::real && !exotic) {
        // A real operand read through its strides (element() decides per value): op(X)'s
        // row (A) or column (B) o and K index l are at o so + l sl.
        const std::size_t ld = std::size_t(x.ld);
        const std::size_t so = outer_contiguous ? 1 : ld, sl = outer_contiguous ? ld : 1;
        const double* base = x.x + std::size_t(o0 + ob) * so + std::size_t(k0 + lb) * sl;
        if (outer_contiguous) {
            for (int kk = 0; kk < kcols; ++kk)
                for (int oo = 0; oo < orows; ++oo) v[position(is_a, oo, kk)] = base[oo + kk * sl] * scale[oo];
        } else {
            for (int oo = 0; oo < orows; ++oo)
                for (int kk = 0; kk < kcols; ++kk) v[position(is_a, oo, kk)] = base[oo * so + kk] * scale[oo];
        }
        return;
    }
    if (x.kind != Interleave::real && (x.kind == Interleave::complex_a) == is_a && !exotic) {
        // A complex view, a row (A') or column (B') at a time, each value from its stored entry
        // with element()'s sign (complex_line): the same products as the generic loop's.
        for (int oo = 0; oo < orows; ++oo) {
            const ComplexLine<double> line = complex_line(x, o0 + ob + oo);
            for (int kk = 0; kk < kcols; ++kk) v[position(is_a, oo, kk)] = line.value(k0 + lb + kk) * scale[oo];
        }
        return;
    }
    if (outer_contiguous) {
        for (int kk = 0; kk < kcols; ++kk)
            for (int oo = 0; oo < orows; ++oo) put(oo, kk);
    } else {
        for (int oo = 0; oo < orows; ++oo)
            for (int kk = 0; kk < kcols; ++kk) put(oo, kk);
    }
}

// Runs body(p, s, v) for every block of the chunk, one panel per task (a block has one writer).
template <typename Body>
void for_each_block(bool is_a, int outer, int kc, int threads, Body&& body) {
    const int tile = is_a ? g.mr : g.nr, panels = (outer + tile - 1) / tile;
    const int ksteps = (kc + g.kstep - 1) / g.kstep;
    parallel_for(threads, panels, [&](int p, int) {
        alignas(64) double v[kBlockValues];
        for (int s = 0; s < ksteps; ++s) body(p, s, (std::size_t(p) * ksteps + s) * kBlockValues, v);
    });
}

}  // namespace

bool int8_halves(const CrtBasis& basis, int depth, Int8Halves* out) {
    out->a = basis.range_bits / 2;
    out->b = basis.range_bits - out->a;
    // sqrt(depth) < 2^(half - 1) for the smaller half.
    return double(depth) < std::ldexp(1.0, 2 * (out->a - 1));
}

void pack_int8_residues(bool is_a, const OperandView<double>& x, const Int8OperandFacts& f, int half,
                        const CrtBasis& basis, int o0, int outer, int k0, int kc, std::int8_t* const* out,
                        int threads) {
    const int tile = is_a ? g.mr : g.nr;
    const detail::Int8ResidueLoops& loops = *isa_kernels().int8_residues;
    for_each_block(is_a, outer, kc, threads, [&](int p, int s, std::size_t at, double* v) {
        int shift[g.mr] = {};
        for (int oo = 0; oo < tile && p * tile + oo < outer; ++oo) shift[oo] = int8_shift(f, o0 + p * tile + oo, half);
        gather_scaled(is_a, x, o0, outer, k0, kc, p, s, shift, v);
        loops.residues(v, basis, out, at);
    });
}

void pack_int8_magnitudes(bool is_a, const OperandView<double>& x, const Int8OperandFacts& f, int o0, int outer,
                          int k0, int kc, std::int8_t* out, int threads) {
    const int tile = is_a ? g.mr : g.nr;
    const detail::Int8ResidueLoops& loops = *isa_kernels().int8_residues;
    for_each_block(is_a, outer, kc, threads, [&](int p, int s, std::size_t at, double* v) {
        // |x| 2^(7 - e) <= 128: its floor is at most |x| 2^(7 - e); 127 caps the one value 2^e.
        int shift[g.mr] = {};
        for (int oo = 0; oo < tile && p * tile + oo < outer; ++oo) shift[oo] = 7 - f.e[o0 + p * tile + oo];
        if (loops.digits_full) {  // else gather_scaled finds the scales itself
            double scale[g.mr];
            bool exotic = false;
            if (const double* whole = whole_block(is_a, x, o0, outer, k0, kc, p, s, shift, scale, &exotic)) {
                loops.digits_full(is_a, whole, std::size_t(x.ld), scale, out, at);
                return;
            }
        }
        gather_scaled(is_a, x, o0, outer, k0, kc, p, s, shift, v);
        loops.digits(v, out, at);
    });
}

}  // namespace amxblas::kernels

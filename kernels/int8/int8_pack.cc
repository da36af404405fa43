#include "kernels/int8/int8_pack.h"

#include <cmath>

#include "kernels/pack/operand_element.h"
#include "kernels/runtime/thread_pool.h"

namespace amxblas::kernels {
namespace {

constexpr TileGeometry g = kAmxInt8Geometry;

// Where row (A) or column (B) o of a panel and K index kk of a K step go in a block.
inline int position(bool is_a, int o, int kk) {
    return is_a ? o * g.kstep + kk
                : (o / g.nr_vnni) * (g.kstep * g.nr_vnni) + (kk / 4) * (4 * g.nr_vnni) + (o % g.nr_vnni) * 4 + kk % 4;
}

// x 2^s rounded to the nearest integer (ties to even). Scaling by a power of two is exact
// unless the result is below 2^-1022, and then it rounds to 0 either way.
inline std::int64_t scaled_integer(double x, int s) {
    const double v = s >= -1022 && s <= 1023 ? x * std::ldexp(1.0, s) : std::ldexp(x, s);
    return std::llrint(v);
}

// The residue of v modulo m in [-128, 127]: the low byte for 256, else the symmetric one.
inline std::int8_t residue(std::int64_t v, int m) {
    if (m == 256) return std::int8_t(std::uint8_t(std::uint64_t(v) & 0xFF));
    int r = int(v % m);
    const int h = m / 2;
    r -= r > h ? m : 0;
    r += r < -h ? m : 0;
    return std::int8_t(r);
}

// Runs body(o, kk, value) over every position of the chunk (zeros past the edges), one panel
// per task: writes never share a block between threads.
template <typename Body>
void for_each_panel_value(bool is_a, const OperandView<double>& x, int o0, int outer, int k0, int kc, int threads,
                          Body&& body) {
    const int tile = is_a ? g.mr : g.nr, panels = (outer + tile - 1) / tile;
    const int ksteps = (kc + g.kstep - 1) / g.kstep;
    parallel_for(threads, panels, [&](int p, int) {
        for (int s = 0; s < ksteps; ++s) {
            const std::size_t block = (std::size_t(p) * ksteps + s) * std::size_t(g.mr * g.kstep);
            for (int kk = 0; kk < g.kstep; ++kk)
                for (int oo = 0; oo < tile; ++oo) {
                    const int o = p * tile + oo, l = s * g.kstep + kk;
                    const bool inside = o < outer && l < kc;
                    const double v = !inside ? 0.0 : is_a ? element(x, o0 + o, k0 + l) : element(x, k0 + l, o0 + o);
                    body(o0 + o, inside, block + position(is_a, oo, kk), v);
                }
        }
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
                        const CrtBasis& basis, int o0, int outer, int k0, int kc, std::int8_t* const* out, int threads) {
    for_each_panel_value(is_a, x, o0, outer, k0, kc, threads, [&](int o, bool inside, std::size_t at, double v) {
        const std::int64_t q = inside && v != 0 ? scaled_integer(v, int8_shift(f, o, half)) : 0;
        for (int l = 0; l < basis.count; ++l) out[l][at] = residue(q, basis.m[l]);
    });
}

void pack_int8_magnitudes(bool is_a, const OperandView<double>& x, const Int8OperandFacts& f, int o0, int outer,
                          int k0, int kc, std::int8_t* out, int threads) {
    for_each_panel_value(is_a, x, o0, outer, k0, kc, threads, [&](int o, bool inside, std::size_t at, double v) {
        // |x| 2^(7 - e) <= 128, and floor of it at most |x| 2^(7 - e): 127 caps the one value 2^e.
        const double d = inside && v != 0 ? std::floor(std::ldexp(std::fabs(v), 7 - f.e[o])) : 0.0;
        out[at] = std::int8_t(d < 127 ? d : 127);
    });
}

}  // namespace amxblas::kernels

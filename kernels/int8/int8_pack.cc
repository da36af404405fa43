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

// The residue of v modulo m in [-128, 127]: the low byte for 256, else the symmetric one.
inline std::int8_t residue(std::int64_t v, int m) {
    if (m == 256) return std::int8_t(std::uint8_t(std::uint64_t(v) & 0xFF));
    int r = int(v % m);
    const int h = m / 2;
    r -= r > h ? m : 0;
    r += r < -h ? m : 0;
    return std::int8_t(r);
}

// The residues of round(x 2^s) modulo each modulus, into r[l]. Scaling by a power of two is
// exact unless the result is below 2^-1022, and then it rounds to 0 either way. Below 2^62 the
// integer is formed in 64 bits; above, x 2^s is already an integer, mant 2^e with a 53-bit
// mant and e >= 10, and its residues come from mant's and the table of 2^e mod m_l (the
// halves reach 2^91 with 24 moduli).
inline void residues(double x, int s, const CrtBasis& basis, std::int8_t* r) {
    const double v = s >= -1022 && s <= 1023 ? x * std::ldexp(1.0, s) : std::ldexp(x, s);
    if (std::fabs(v) < 0x1p62) {
        const std::int64_t q = std::llrint(v);
        for (int l = 0; l < basis.count; ++l) r[l] = residue(q, basis.m[l]);
        return;
    }
    int e;
    const double f = std::frexp(v, &e);                         // v = f 2^e, 1/2 <= |f| < 1
    const std::int64_t mant = std::int64_t(std::ldexp(f, 53));  // exact: |mant| < 2^53
    e -= 53;                                                     // v = mant 2^e, e >= 10
    for (int l = 0; l < basis.count; ++l) {
        const int m = basis.m[l];
        r[l] = residue(mant % m * basis.pow2_mod[l][e], m);
    }
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
        std::int8_t r[kInt8MaxModuli] = {};
        if (inside && v != 0) residues(v, int8_shift(f, o, half), basis, r);
        for (int l = 0; l < basis.count; ++l) out[l][at] = r[l];
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

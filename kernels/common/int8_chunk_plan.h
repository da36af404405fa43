// How the INT8 engine cuts a call into chunks, as plain arithmetic: its driver sizes its
// workspace and walks the chunks with it (kernels/int8/int8_walk.h), and the policy's cost model
// counts with it how often the operands are split (policy/cost_model.cc), so the two agree.
//
// A call of `layers` INT8 products (moduli) keeps, per MC x NC super-block, one residue per
// layer and entry across the K chunks (an int8: each chunk's INT32 sums are reduced as they are
// added), and packs `layers` bytes per value of op(A)'s MC x KC and op(B)'s KC x NC chunks; the
// certificate's pass (one product of magnitudes) keeps an FP64 sum per entry instead; with K in
// one chunk neither is kept for the super-block, only a task's worth per participant. op(B) is
// split again for every row of super-blocks, ceil(M / MC) times; op(A) for every super-block
// of its row, ceil(N / NC) times, but once where K is one chunk: then the walk keeps its chunk
// along the row (int8_a_packs). Splitting costs about as much per value and modulus as the
// products per entry and modulus (docs/performance.md), so the plan takes, of the chunkings
// that fit the budget, the one that splits least, counting a K chunk's reduction of the
// accumulators (one operation per entry and modulus) as a value split.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace amxblas::kernels {

struct Int8ChunkPlan {
    int mc = 0, nc = 0, kc = 0;  // multiples of 32, 32 and 64, or the call's padded extent
};

// 8 MiB over the BF16 driver's chunks: 16 layers of a 1024 x 1024 super-block in 1024-deep
// chunks (op(A)'s chunk, op(B)'s and the kept residues, 16 MiB each) and the participants'
// slots fit, so a call with K past one chunk packs op(A) once per 1024 columns of C where
// 48 MiB gave 768: at 1024 x 1024 x 65536, 16 moduli, op(A) once instead of twice, the split
// and pack 605-680 ms against 771-906 (Zen 5, avx512, three rounds alternated); at 4096^3
// four times instead of six. A routed call's peak extra memory stays within issue 28's 64 MiB
// + 2% of the operands (docs/performance.md).
constexpr std::size_t kInt8BudgetBytes = std::size_t(56) << 20;
constexpr int kInt8Tile = 32, kInt8Kstep = 64;                   // kAmxInt8Geometry's mr = nr, kstep
constexpr int kInt8MaxChunkDepth = 4096;
constexpr int kInt8OutBlock = 256;  // the writer's blocks: kBlockM x kBlockN FP64 per participant
constexpr int kInt8GroupSide = 128;  // a task's square of micro-tiles (kernels/int8/int8_walk.h)

inline std::size_t int8_aligned(std::size_t x) { return (x + 63) / 64 * 64; }
inline int int8_round_up(int x, int step) { return (x + step - 1) / step * step; }

// Bytes of one participant's output slot: a kInt8OutBlock square of FP64 and, for the residue
// pass (group_residues), the residues of a task's group on the last K chunk, after its first
// kInt8GroupSide rows of output.
inline std::size_t int8_out_slot_bytes(int layers, bool group_residues) {
    const std::size_t block = std::size_t(kInt8OutBlock) * kInt8OutBlock * 8;
    if (!group_residues) return block;
    const std::size_t group = std::size_t(kInt8GroupSide) * kInt8OutBlock * 8 +
                              std::size_t(layers) * kInt8GroupSide * kInt8GroupSide;
    return group > block ? group : block;
}

// One participant's part of the workspace: two INT32 micro-tiles and an output slot.
inline std::size_t int8_participant_bytes(int layers, bool sums) {
    return 2 * int8_aligned(std::size_t(kInt8Tile) * kInt8Tile * 4) + int8_aligned(int8_out_slot_bytes(layers, !sums));
}

// Bytes of the workspace of a chunking: packed layers of both chunks, what is kept across K
// chunks, and per participant two INT32 micro-tiles and an output slot. Kept across chunks:
// the int8 residues of the super-block (or, for the certificate's pass, sums: FP64 sums);
// with K in one chunk (one_chunk) nothing, since each task's tiles are final when it ends (its
// residues stay in its participant's slot, the certificate's sums in its output block).
inline std::size_t int8_chunk_bytes(const Int8ChunkPlan& ch, int layers, bool sums, bool one_chunk, int threads) {
    const std::size_t mp = std::size_t(int8_round_up(ch.mc, kInt8Tile));
    const std::size_t np = std::size_t(int8_round_up(ch.nc, kInt8Tile));
    const std::size_t kp = std::size_t(int8_round_up(ch.kc, kInt8Kstep));
    std::size_t bytes = std::size_t(layers) * (int8_aligned(mp * kp) + int8_aligned(np * kp));
    if (!one_chunk) bytes += sums ? int8_aligned(mp * np * 8) : std::size_t(layers) * int8_aligned(mp * np);
    return bytes + std::size_t(threads) * int8_participant_bytes(layers, sums);
}

// How often a chunking packs op(A) (int8_walk.h): once per super-block, or once in all where
// K is one chunk (kc covers the padded K), since the super-blocks of a row share its chunk.
inline int int8_a_packs(const Int8ChunkPlan& ch, int n, int k) {
    return ch.kc >= int8_round_up(k, kInt8Kstep) ? 1 : (n + ch.nc - 1) / ch.nc;
}

// The participants whose slots (about 0.5 MiB each) count against kInt8BudgetBytes; those of
// more participants come on top, as their stacks do. Counting every one shrank the chunks as the
// threads grew, until nothing fit: at 56 threads 2048^3 took 1024 x 768 x 512 (op(A) packed
// three times), at 112 threads 32 x 32 x 64 (each operand packed 64 times).
constexpr int kInt8BudgetParticipants = 4;

// The chunking that splits least (see above) among those within kInt8BudgetBytes with
// kInt8BudgetParticipants' slots; 32 x 32 x 64 super-blocks when none is (never: they take well
// under 4 MiB for 24 layers).
// Keeping op(A)'s chunk along a row favours narrow super-blocks, whose few tasks (kInt8GroupSide
// squares) leave threads waiting at each super-block's end: so the plan takes the chunking that
// splits least counting op(A) as split per super-block, and then, among the chunkings with at
// least two tasks a thread or as many tasks as that one (the fewer), the one that splits least
// counting op(A) as the walk splits it (int8_a_packs: once where K fits one chunk, at most
// kInt8MaxChunkDepth deep): a K of one chunk has no fold before the last, while K
// chunks fold every chunk's sums into kept residues of the whole super-block, C-sized work each
// time. At N = 4096, 16 moduli, the one-chunk plan (768 x 64 x 4096: op(A) split once, op(B) six
// times) against 1024 x 1024 x 1024 (each four times, four folds), phases measured with the
// products taken out (bench.sh --int8's model, 2 threads): reconstruction 150-159 against 428 ms,
// split + pack 177-186 against 261 ms; whole calls on the avx512 backend, where the products
// dominate, 5.5-6.8 s against 6.2-6.5 s (three alternated rounds of two; a 2-core Intel Xeon,
// 2 MiB of L2 a core, at load 3).
inline Int8ChunkPlan plan_int8_chunks(int m, int n, int k, int layers, bool sums, int threads) {
    const int mp = int8_round_up(m, kInt8Tile), np = int8_round_up(n, kInt8Tile), kp = int8_round_up(k, kInt8Kstep);
    static constexpr int kSides[] = {4096, 3072, 2048, 1536, 1024, 768, 512, 384, 256, 128, 64, 32};
    static constexpr int kDepths[] = {kInt8MaxChunkDepth, 2048, 1024, 512, 256, 128, 64};
    const auto tasks = [m, n](const Int8ChunkPlan& ch) {
        const int rows = std::min(ch.mc, m), cols = std::min(ch.nc, n);
        return double((rows + kInt8GroupSide - 1) / kInt8GroupSide) * ((cols + kInt8GroupSide - 1) / kInt8GroupSide);
    };
    // Of the candidates within the budget with at least min_tasks tasks, the cheapest.
    const auto cheapest = [&](bool a_kept, double min_tasks) {
        Int8ChunkPlan best{kInt8Tile, kInt8Tile, kInt8Kstep};
        double best_cost = -1;
        const auto consider = [&](int mc, int nc, int kc) {
            const Int8ChunkPlan ch{mc, nc, kc};
            const int counted = std::min(threads, kInt8BudgetParticipants);
            if (int8_chunk_bytes(ch, layers, sums, kc >= kp, counted) > kInt8BudgetBytes || tasks(ch) < min_tasks)
                return;
            const int a_packs = a_kept ? int8_a_packs(ch, n, k) : (n + nc - 1) / nc;
            const double splits = double(m) * k * a_packs + double(k) * n * ((m + mc - 1) / mc);
            const double reductions = double(m) * n * ((k + kc - 1) / kc);
            const double cost = splits + reductions;
            // Of equal costs the squarer super-block: more tasks, fewer and wider packs of op(B).
            const int side = std::min(std::min(mc, m), std::min(nc, n));
            const int best_side = std::min(std::min(best.mc, m), std::min(best.nc, n));
            if (best_cost < 0 || cost < best_cost || (cost == best_cost && side > best_side)) {
                best = ch;
                best_cost = cost;
            }
        };
        // The lists descend, so a side or depth the call's extent caps repeats a candidate
        // already considered, which cannot cost strictly less: skipping it picks the same plan,
        // and a small call weighs a few candidates instead of the lists' 1008 (its planning
        // showed in the profile of a sampled decision, gemm_sample.h).
        int last_depth = 0;
        for (int kc : kDepths) {  // kDepths starts at kInt8MaxChunkDepth
            const int depth = kc < kp ? kc : kp;
            if (depth == last_depth) continue;
            last_depth = depth;
            int last_mc = 0;
            for (int ms : kSides) {
                const int mc = ms < mp ? ms : mp;
                if (mc == last_mc) continue;
                last_mc = mc;
                int last_nc = 0;
                for (int ns : kSides) {
                    const int nc = ns < np ? ns : np;
                    if (nc == last_nc) continue;
                    last_nc = nc;
                    consider(mc, nc, depth);
                }
            }
        }
        return best;
    };
    const Int8ChunkPlan wide = cheapest(false, 0);
    return cheapest(true, std::min(2.0 * threads, tasks(wide)));
}

}  // namespace amxblas::kernels

// The INT8 FP64 engine side by side with BF16 auto and OpenBLAS DGEMM (issue 24, item 5;
// scripts/bench.sh --int8, driver amxblas_bench_int8). The kernels are called directly
// (kernels/driver/routed_gemm.h), as amxblas_bench does, never through environment variables.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/gemm_types.h"
#include "bench/bench.h"

namespace amxblas::replay {
struct GemmFile;
}

namespace amxblas::bench {

struct Int8Options {
    std::vector<int> sizes;        // part 1 (side by side)
    std::vector<int> sp_sizes;     // part 2 (split + pack against memcpy)
    std::vector<int> model_sizes;  // part 3 (the AMX model), measured phases at these N
    int threads = 2, reps = 3, sample = 1024;
    kernels::Backend backend = kernels::Backend::reference;
    bool quick = false;
    std::string dft_dir;  // part 4; empty: skipped
    int amx_counts_n = 0;  // > 0: only the harness counts at this N (under LD_PRELOAD=libamxemu.so)
    int bf16_products = 21;  // BF16 auto's count for the model (see bench_int8_model.cc)
};

// The INT8 engine's fp64_products / report, one place.
kernels::RunOptions int8_options(const Int8Options& o, kernels::Fp64Engine engine, int products,
                                 kernels::PhaseTimes* t, kernels::Fp64AutoReport* r);

// Part 1: INT8 auto, BF16 auto and OpenBLAS DGEMM, times, counts and errors.
void run_int8_side_by_side(const Int8Options& o);
// Part 2: the INT8 facts pass + residue split and pack against memcpy.
void run_int8_split_pack(const Int8Options& o);
// Part 3a: TDPBSSD / TILELOADD / TILESTORED of one INT8 auto call under the trap harness,
// against the formula (int8_tile_counts).
int run_int8_amx_counts(const Int8Options& o);
// Part 3b: the whole-call AMX model of INT8 auto beside BF16 auto, against native DGEMM.
void run_int8_model(const Int8Options& o);
// Part 4: the captured calls of a DFT code, INT8 auto and BF16 auto against OpenBLAS.
void run_int8_dft(const Int8Options& o);
// Part 5: what a call that auto forwards costs against calling OpenBLAS directly.
void run_int8_forwarded(const Int8Options& o);

// A .gemm call (scripts/replay/gemm_file.h) through the kernels into *c (C's initial values
// first): nullptr, or the reason it was forwarded (C then untouched). And through OpenBLAS.
// The _in forms take *c as it is (the caller has put C's initial values there), as a program's
// call finds its C: for timings that should not include the copy.
const char* routed(const replay::GemmFile& g, const kernels::RunOptions& opt, std::vector<double>* c);
void openblas(const replay::GemmFile& g, std::vector<double>* c);
const char* routed_in(const replay::GemmFile& g, const kernels::RunOptions& opt, std::vector<double>* c);
void openblas_in(const replay::GemmFile& g, std::vector<double>* c);
// The names of the .gemm files in dir, sorted.
std::vector<std::string> gemm_files(const std::string& dir);

// The tile instructions one INT8 call issues (kernels/int8/int8_walk.h): per 32 x 32
// micro-tile, layer (modulus, or the magnitudes) and 64-deep K step 4 TILELOADD + 4 TDPBSSD;
// per micro-tile, layer and micro-kernel call (a panel of at most 2048 K values inside a K
// chunk of kernels/common/int8_chunk_plan.h's depth) 4 TILEZERO + 4 TILESTORED. `moduli`
// products in one pass, and `magnitude_passes` passes of the certificate's one product.
struct Int8TileCounts {
    double tdpbssd = 0, tileloadd = 0, tilestored = 0, tilezero = 0;
};
Int8TileCounts int8_tile_counts(int m, int n, int k, int moduli, int magnitude_passes, int threads);

// The moduli INT8 auto picks and the entries it would repair, from the certificate alone
// (int8_certificate.h) with the exact magnitude product computed by OpenBLAS DGEMM on the
// digits (exact: every sum is below 2^53): the same decision as the engine, without its
// products. Returns false when no count certifies.
bool int8_auto_decision(const Shape& s, const std::vector<double>& a, const std::vector<double>& b, int threads,
                        int* count, long* failing);
// The N x N x N DGEMM of parts 2 and 3: uniform inputs (make_inputs, seed 3) into *a and *b, and
// INT8 auto's decision on them (int8_auto_decision). False when no count certifies.
bool uniform_int8_call(int n, int threads, std::vector<double>* a, std::vector<double>* b, int* count, long* failing);

}  // namespace amxblas::bench

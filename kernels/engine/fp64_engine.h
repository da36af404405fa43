// What an FP64 engine gives the routed pipeline (kernels/driver/routed_gemm.cc): one row of
// kernels/common/engines.def, whose folder kernels/<id>/ defines fp64_engine_<id>() returning
// these functions. The pipeline tries the engines in the table's order (auto), runs the one the
// settings name (a fixed count), and certifies a sample of a call with each before the call's
// own certificate (kernels/driver/gemm_sample.h); nothing else of an engine is named above it.
//
// Every function keeps the kernels' contract (kernels/bf16/emulated_gemm.h): nullptr, or the
// forward reason with C untouched. accuracy:uncertified from an engine under auto passes the
// call on to the next engine; any other reason is final.
#pragma once

#include <cstddef>

#include "kernels/common/gemm_types.h"
#include "kernels/engine/gemm_call.h"
#include "kernels/engine/scaled_sample.h"

namespace amxblas::kernels {

struct Fp64EngineOps {
    // Whether auto (AMXBLAS_FP64_ENGINE=auto, AMXBLAS_FP64_PRODUCTS=auto) tries this engine on
    // opt's backend. The base engine (the table's last row) is always tried.
    bool (*auto_takes)(const RunOptions& opt);
    // The call: opt.fp64_products is a fixed count of this engine's (its row's range) or
    // kFp64Auto, and call.structural is set. On success C is written and opt.fp64_report, if
    // set, filled (its engine is set by the pipeline).
    const char* (*run)(const Fp64Gemm& call, const RunOptions& opt);
    // Auto's decision on a sample (one thread, nothing timed, no C): *failing gets the entries
    // (ZGEMM: parts) of the sample's real GEMM not certified at the count the engine would
    // pick, all of them where no count applies. It may leave hints for the call's own
    // certificate in *run (RunOptions::int8_counts_from, fp64_auto_depth). nullptr, else a
    // reason that makes the sample decide nothing.
    const char* (*decide_sample)(const Fp64Gemm& sample, const RunOptions& one, long* failing, RunOptions* run);
    // The screen of a sample (kernels/driver/sample_screen.h): how many of its entries the
    // engine's certificate is shown to fail at every count, without its certificate; -1 where
    // it cannot tell. enough: the count the caller acts above (negative: count all); the
    // screen may stop once it is past it.
    long (*screen)(ScaledSample& x, const RunOptions& opt, long enough);
    // The workspace decide_sample leases for a real GEMM of m x n x k on one thread
    // (gemm_sample.cc sizes the sample's arena for every engine).
    std::size_t (*sample_bytes)(int m, int n, int k, const RunOptions& opt);
};

// Each row's functions, defined in its folder.
#define AMXBLAS_FP64_ENGINE(id, min_count, max_count, counts, unit, cost) const Fp64EngineOps& fp64_engine_##id();
#include "kernels/common/engines.def"
#undef AMXBLAS_FP64_ENGINE

}  // namespace amxblas::kernels

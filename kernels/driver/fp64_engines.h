// The FP64 engines of kernels/common/engines.def as the routed pipeline uses them: each row's
// functions (kernels/engine/fp64_engine.h), and the engines a call tries, in order.
#pragma once

#include "kernels/common/gemm_types.h"
#include "kernels/engine/fp64_engine.h"

namespace amxblas::kernels {

const Fp64EngineOps& fp64_engine_ops(Fp64Engine e);

// The engines a call runs, in the order it tries them: the one the settings name
// (RunOptions::fp64_engine); under the automatic engine with a fixed count the base engine
// (the table's last row); under the automatic engine with auto every row whose auto_takes
// accepts the call's backend, and the base engine. Only the automatic engine goes on to the
// next after an engine refuses a call for accuracy.
struct Fp64EngineChain {
    Fp64Engine engine[kFp64EngineCount] = {};
    int count = 0;
    bool tried[kFp64EngineCount] = {};  // by Fp64Engine
    bool goes_on = false;               // the automatic engine: accuracy:uncertified passes it on
};
Fp64EngineChain fp64_engine_chain(const RunOptions& opt);

}  // namespace amxblas::kernels

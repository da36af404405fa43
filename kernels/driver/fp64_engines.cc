#include "kernels/driver/fp64_engines.h"

namespace amxblas::kernels {

const Fp64EngineOps& fp64_engine_ops(Fp64Engine e) {
    switch (e) {
#define AMXBLAS_FP64_ENGINE(id, min_count, max_count, counts, unit, cost) \
    case Fp64Engine::id: return fp64_engine_##id();
#include "kernels/common/engines.def"
#undef AMXBLAS_FP64_ENGINE
        case Fp64Engine::automatic: break;
    }
    return fp64_engine_ops(kFp64BaseEngine);
}

Fp64EngineChain fp64_engine_chain(const RunOptions& opt) {
    Fp64EngineChain chain;
    const auto add = [&chain](Fp64Engine e) {
        chain.engine[chain.count++] = e;
        chain.tried[static_cast<int>(e)] = true;
    };
    if (opt.fp64_engine != Fp64Engine::automatic) {
        add(opt.fp64_engine);
    } else if (opt.fp64_products != kFp64Auto) {
        add(kFp64BaseEngine);
    } else {
        chain.goes_on = true;
        for (int i = 0; i < kFp64EngineCount; ++i) {
            const Fp64Engine e = static_cast<Fp64Engine>(i);
            if (e == kFp64BaseEngine || fp64_engine_ops(e).auto_takes(opt)) add(e);
        }
    }
    return chain;
}

}  // namespace amxblas::kernels

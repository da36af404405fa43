// The screen of a sample's entries (sample_screen.h): the scaled sample, then each engine's
// screen in the table's order.
#include "kernels/driver/sample_screen.h"

#include <complex>

#include "kernels/driver/fp64_engines.h"
#include "kernels/engine/guard.h"
#include "kernels/engine/scaled_sample.h"

namespace amxblas::kernels {

template <typename T>
SampleScreen screen_sample(const GemmArgs<T>& s, const RunOptions& opt, const bool* tried, long enough) {
    SampleScreen out;
    if (check_backend(opt)) return out;
    ScaledSample x;
    if (!x.begin(s)) return out;
    for (int e = 0; e < kFp64EngineCount; ++e) {
        if (!tried[e]) continue;
        out.failing[e] = fp64_engine_ops(static_cast<Fp64Engine>(e)).screen(x, opt, enough);
        // An engine the screen cannot judge, or does not count past `enough`, keeps the call:
        // the engines after it need not be screened.
        if (out.failing[e] < 0 || (enough >= 0 && out.failing[e] <= enough)) break;
    }
    return out;
}

template SampleScreen screen_sample(const GemmArgs<double>&, const RunOptions&, const bool*, long);
template SampleScreen screen_sample(const GemmArgs<std::complex<double>>&, const RunOptions&, const bool*, long);

}  // namespace amxblas::kernels

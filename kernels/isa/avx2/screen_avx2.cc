// The sample screen's loops, avx2 build (kernels/isa/screen_loops.h; flags: sources.cmake).
#include "kernels/isa/screen_loops.h"

#include <algorithm>
#include <cmath>

namespace amxblas::kernels::detail {

#include "kernels/isa/sample_screen_loops.inc"

const ScreenLoops& screen_loops_avx2() {
    static const ScreenLoops loops{screen_slice, screen_upper};
    return loops;
}

}  // namespace amxblas::kernels::detail

// What the cost model's sweep (model_sweep.cc, bench.sh --model) and the mixed workload
// (mixed_workload.cc, bench.sh --mixed) share: the sweep's shapes and the median they take of
// each call's rounds.
#pragma once

#include <algorithm>
#include <vector>

namespace amxblas::bench {

// The sweep: 26 shapes; with each of the four routines, 104 rows.
inline constexpr const char* kSweepShapes =
    "128x128x128 256x256x256 384x384x384 512x512x512 768x768x768 "    // square
    "2048x64x256 4096x32x128 1024x128x128 3000x48x200 "                // tall-skinny
    "64x2048x256 32x4096x128 128x1024x128 48x3000x200 "                // short-wide
    "64x64x4096 128x128x2048 256x256x1024 96x96x2048 "                 // deep K
    "512x512x32 1024x1024x16 768x768x64 "                              // small K
    "32x32x32 64x64x64 16x16x16 48x24x40 300x200x100 100x300x500";     // small, odd

// The median of a call's rounds (the upper one of an even count); 0 without rounds.
inline double median_of_rounds(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace amxblas::bench

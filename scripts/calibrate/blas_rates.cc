#include "scripts/calibrate/blas_rates.h"

#include <algorithm>
#include <chrono>

namespace amxblas::calibrate {

BlasRates measure_blas(BlasLibrary& lib, int routine, int threads, int rounds) {
    const auto start = std::chrono::steady_clock::now();
    BlasRates out;
    const double flops_per = routine >= 2 ? 8.0 : 2.0;
    // The library's speed from a 128^3 call (the fastest of three, after a first), then the
    // long side that takes about 20 ms, in steps of 2^(1/3), from 128 to 2048.
    lib.time_call(routine, 128, 128, 128);
    double t = 1e30;
    for (int i = 0; i < 3; ++i) t = std::min(t, lib.time_call(routine, 128, 128, 128));
    const double rate = flops_per * 128.0 * 128 * 128 / t;
    int l = 128;
    while (l < 2048 && flops_per * (1.26 * l) * (1.26 * l) * (1.26 * l) / rate < 0.02) l = int(l * 1.26) / 8 * 8;
    out.side = l;
    const int h = l / 2, q = l / 4, s = 24, u = 64;
    const std::vector<BlasSample> grid = {
        {l, l, l, 0}, {h, h, h, 0}, {q, q, q, 0}, {u, u, u, 0}, {s, s, s, 0}, {8, 8, 8, 0},
        {l, l, s, 0}, {l, s, l, 0}, {s, l, l, 0}, {h, h, u, 0}, {h, u, h, 0}, {u, h, h, 0},
        {l, s, s, 0}, {s, l, s, 0}, {s, s, l, 0}, {u, u, l, 0}};
    std::vector<std::vector<double>> times(grid.size());
    for (int round = 0; round <= rounds; ++round)
        for (std::size_t i = 0; i < grid.size(); ++i) {
            const double x = lib.time_call(routine, grid[i].m, grid[i].n, grid[i].k);
            if (round > 0) times[i].push_back(x);
        }
    for (std::size_t i = 0; i < grid.size(); ++i) {
        std::sort(times[i].begin(), times[i].end());
        BlasSample sample = grid[i];
        sample.seconds = times[i][times[i].size() / 2];
        out.samples.push_back(sample);
    }
    out.model = fit_blas_time(out.samples, threads, routine >= 2);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace amxblas::calibrate

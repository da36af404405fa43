// The first-call section of bench.sh: the first GEMM call of a fresh process against a warm
// call of the same order, through libamxblas.so and, side by side, through OpenBLAS alone.
//
// A first call pays for what a process has not done yet: the library's configuration and the
// real BLAS's resolution, the worker threads' start, and the first touch of its buffers. On a
// virtual machine the first touch of fresh memory can dominate (the host backs guest pages
// lazily), and it hits OpenBLAS's own first call too. So each child also measures what this
// machine charges for a fresh 4 KiB page, and bench.sh runs every case in several fresh
// processes; --first-call-summary prints the medians, the verdicts, and the same numbers for
// OpenBLAS called directly, so the library's own share can be read off.
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cblas.h>

#include "bench/bench.h"
#include "bench/real_blas_threads.h"

namespace amxblas::bench {
namespace {

constexpr int kCalls = 12;  // per process; warm = the median of calls 3..12

// Microseconds per 4 KiB page to fault in a fresh 8 MiB anonymous mapping (written once).
double fresh_page_touch_us() {
    const std::size_t bytes = std::size_t(8) << 20;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    const double t0 = now_s();
    std::memset(p, 1, bytes);
    const double t = now_s() - t0;
    munmap(p, bytes);
    return 1e6 * t / double(bytes / 4096);
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

}  // namespace

// The child: `--first-call N --route fp32|fp64_6 [--baseline]`. Without --baseline it runs
// under LD_PRELOAD of the interposer (bench.sh sets AMXBLAS_BACKEND and AMXBLAS_FP64_PRODUCTS),
// so cblas_sgemm/cblas_dgemm below are the library's, and it checks that the calls were routed
// by comparing C with OpenBLAS's own result (the emulation never matches it bit for bit on these
// inputs). With --baseline it runs without the interposer: the same calls are OpenBLAS's.
// Appends one row to the CSV: n,route,first_s,second_s,warm_s,routed,touch_us_per_page,
// first_faults,later_faults,third_s (routed is -1 for a baseline row; first_faults: the page faults
// of the first call; later_faults: those of all the calls after it, which a warm call should not
// take; third_s: the third call, itself part of the warm median, which the summary sets beside the
// second as the control: one call's spread on this machine).
int run_first_call(int n, const std::string& route, bool baseline, const std::string& csv_path) {
    const bool fp64 = route != "fp32";
    // OpenBLAS starts its threads when it is loaded, and they spin for 2^28 cycles (0.13 s
    // here) before they first sleep: calls made earlier in a process share the cores with
    // them. Without this wait the interposed child's calls did (an N = 256 SGEMM's second call
    // +17% over warm on 2 threads, +75% with a worker spinning 300 us instead of 50), and the
    // baseline child's calls found OpenBLAS's threads awake. Both children wait alike.
    wait_for_real_blas_threads_to_sleep();
    const double touch_us = fresh_page_touch_us();  // before any call: not in the timed ones
    const Shape s{n, n, n};
    std::vector<double> ad, bd;
    make_inputs(InputClass::uniform, s, 5, &ad, &bd);
    std::vector<float> af(ad.begin(), ad.end()), bf(bd.begin(), bd.end());
    std::vector<float> cf(std::size_t(n) * n), rf(cf.size());
    std::vector<double> cd(std::size_t(n) * n), rd(cd.size());
    std::vector<double> t;
    long first_faults = 0;  // page faults taken during the first call: its fresh memory
    long later_faults = 0;  // and during the calls after it
    for (int q = 0; q < kCalls; ++q) {
        const long f0 = minor_faults();
        const double t0 = now_s();
        if (fp64)
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, ad.data(), n, bd.data(), n, 0.0,
                        cd.data(), n);
        else
            cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, af.data(), n, bf.data(), n, 0.f,
                        cf.data(), n);
        t.push_back(now_s() - t0);
        (q == 0 ? first_faults : later_faults) += minor_faults() - f0;
    }
    int routed = -1;
    if (!baseline) {
        // OpenBLAS's own cblas_*gemm, past the interposer.
        routed = 0;
        if (void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD)) {
            if (fp64) {
                using Fn = decltype(&cblas_dgemm);
                if (auto f = reinterpret_cast<Fn>(dlsym(h, "cblas_dgemm"))) {
                    f(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, ad.data(), n, bd.data(), n, 0.0,
                      rd.data(), n);
                    routed = std::memcmp(rd.data(), cd.data(), cd.size() * sizeof(double)) != 0;
                }
            } else {
                using Fn = decltype(&cblas_sgemm);
                if (auto f = reinterpret_cast<Fn>(dlsym(h, "cblas_sgemm"))) {
                    f(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, af.data(), n, bf.data(), n, 0.f,
                      rf.data(), n);
                    routed = std::memcmp(rf.data(), cf.data(), cf.size() * sizeof(float)) != 0;
                }
            }
            dlclose(h);
        }
    }
    const double warm = median(std::vector<double>(t.begin() + 2, t.end()));
    const std::string name = baseline ? (fp64 ? "openblas_fp64" : "openblas_fp32") : route;
    std::printf("%-6d %-16s %10.3f %10.3f %10.3f %12.3f %11.2f%% %10.1f %8ld %8ld  %s\n", n, name.c_str(), 1e3 * t[0],
                1e3 * t[1], 1e3 * warm, 1e3 * (t[0] - warm), 100 * (t[1] / warm - 1), touch_us, first_faults, later_faults,
                routed < 0 ? "baseline" : routed ? "routed" : "NOT ROUTED (equal to OpenBLAS)");
    if (std::FILE* f = std::fopen(csv_path.c_str(), "a")) {
        std::fprintf(f, "%d,%s,%.6e,%.6e,%.6e,%d,%.3f,%ld,%ld,%.6e\n", n, name.c_str(), t[0], t[1], warm, routed,
                     touch_us, first_faults, later_faults, t[2]);
        std::fclose(f);
    }
    return 0;  // a call that was not routed (no AVX-512 BF16 here, say) is a MISS in the summary
}

// `--first-call-summary CSV`: the medians over the fresh processes of each (N, route), the
// library's rows beside OpenBLAS's, and the verdicts of issue 12's targets on the medians.
int summarize_first_calls(const std::string& csv_path) {
    std::FILE* f = std::fopen(csv_path.c_str(), "r");
    if (!f) {
        std::printf("first-call summary: cannot read %s\n", csv_path.c_str());
        return 1;
    }
    struct Samples {
        std::vector<double> first_over, second_over, third_over, touch, faults, later_faults;
        bool all_routed = true;
    };
    std::map<std::pair<int, std::string>, Samples> rows;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
        int n = 0, routed = 0;
        char route[64];
        double first = 0, second = 0, warm = 0, touch = 0, faults = 0, later = 0, third = 0;
        const int fields = std::sscanf(line, "%d,%63[^,],%lf,%lf,%lf,%d,%lf,%lf,%lf,%lf", &n, route, &first, &second,
                                       &warm, &routed, &touch, &faults, &later, &third);
        if (fields < 9) continue;  // the header
        if (fields == 10) rows[{n, route}].third_over.push_back(third / warm - 1);  // rows before it had none
        Samples& s = rows[{n, route}];
        s.first_over.push_back(first - warm);
        s.second_over.push_back(second / warm - 1);
        s.touch.push_back(touch);
        s.faults.push_back(faults);
        s.later_faults.push_back(later);
        if (routed == 0) s.all_routed = false;
    }
    std::fclose(f);
    // faults x touch: what the first call's page faults would cost at this machine's rate; the
    // rest of first-warm is everything else a first call does.
    // third-warm: the same statistic for the third call, which is itself a warm one. One call of
    // N = 256 spreads by about 10% around the warm median here, so the median over 11 processes
    // moves by a few percent; third-warm shows how far, beside second-warm.
    std::printf("%-6s %-16s %5s %14s %13s %13s %13s %12s %12s %13s\n", "N", "route", "runs", "first-warm_ms",
                "first_faults", "touch_us/page", "faults_x_touch_ms", "second-warm", "third-warm", "later_faults");
    for (const auto& [key, s] : rows)
        std::printf("%-6d %-16s %5zu %14.3f %13.0f %13.1f %17.3f %11.2f%% %11.2f%% %13.0f\n", key.first,
                    key.second.c_str(), s.first_over.size(), 1e3 * median(s.first_over), median(s.faults),
                    median(s.touch), 1e-3 * median(s.faults) * median(s.touch), 100 * median(s.second_over),
                    s.third_over.empty() ? 0.0 : 100 * median(s.third_over), median(s.later_faults));
    for (const auto& [key, s] : rows) {
        if (key.second.rfind("openblas_", 0) == 0) continue;
        const double first = median(s.first_over), second = median(s.second_over);
        char b[240];
        const auto base = rows.find({key.first, key.second == "fp32" ? "openblas_fp32" : "openblas_fp64"});
        if (base != rows.end())
            std::snprintf(b, sizeof b, "first call %s N=%d: %.2f ms over a warm call < 5 ms (OpenBLAS's own: %.2f ms)",
                          key.second.c_str(), key.first, 1e3 * first, 1e3 * median(base->second.first_over));
        else
            std::snprintf(b, sizeof b, "first call %s N=%d: %.2f ms over a warm call < 5 ms", key.second.c_str(),
                          key.first, 1e3 * first);
        verdict(s.all_routed && first < 5e-3, b);
        if (!s.third_over.empty())
            std::snprintf(b, sizeof b, "second call %s N=%d: %+.2f%% over a warm call < 2%% (the third call: %+.2f%%)",
                          key.second.c_str(), key.first, 100 * second, 100 * median(s.third_over));
        else
            std::snprintf(b, sizeof b, "second call %s N=%d: %+.2f%% over a warm call < 2%%", key.second.c_str(),
                          key.first, 100 * second);
        verdict(s.all_routed && second < 0.02, b);
    }
    return 0;
}

}  // namespace amxblas::bench

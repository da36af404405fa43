// amxblas_bench: OpenBLAS against every route of the BF16 component-product emulation, on one
// backend: time, GFLOP/s (2mnk/T), speedup, accuracy (against OpenBLAS and against an exact
// sampled reference, three input classes), split + pack against compute, split + pack speed
// against memcpy, the domain scan's share, the micro-kernel against the VDPBF16PS peak, and
// the interposer's cost on forwarded calls. Run by scripts/bench.sh; `amxblas_bench --help`.
//
// A second mode, --amx-counts N, runs one call per route on the amx backend and prints the
// tile-instruction counts read from the trap harness (run it under LD_PRELOAD=libamxemu.so).
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <cblas.h>

#include "kernels/bf16/emulated_gemm.h"
#include "shim/domain_check.h"
#include "kernels/driver/routed_gemm.h"
#include "kernels/runtime/cpu_features.h"
#include "tests/common/blas.h"
#include "bench/bench.h"
#include "bench/real_blas_threads.h"
#include "tests/common/table4.h"

namespace amxblas::bench {
namespace {

struct Options {
    std::vector<Shape> shapes;
    kernels::Backend backend = kernels::Backend::avx512;
    int reps = 5;
    int threads = 0;  // 0: every core
    int sample = 256;
    int forward_pairs = 201;
    std::size_t memcpy_bytes = std::size_t(256) << 20;
    double peak_seconds = 0.5;
    std::string out = ".";
    std::string interposer;
    int amx_counts_n = 0;
    bool quick = false;
    bool sweep = false;        // --sweep: the size sweep (timing only) instead of the main run
    int first_call_n = 0;      // --first-call N: the child mode of the first-call section
    std::string first_call_route = "fp32";
    bool first_call_baseline = false;  // --baseline: the first-call child without the interposer
    std::string first_call_summary;    // --first-call-summary CSV: medians and verdicts
};

[[noreturn]] void usage(int rc) {
    std::printf(
        "usage: amxblas_bench [--quick] [--sizes \"256 512 1024 2048\"] [--shapes \"MxNxK ...\"]\n"
        "                     [--backend avx512|reference|amx] [--reps R] [--threads T] [--out DIR]\n"
        "                     [--interposer PATH/libamxblas.so] [--amx-counts N] [--sweep]\n"
        "                     [--first-call N --route fp32|fp64_6 [--baseline]] [--first-call-summary CSV]\n"
        "  --quick        smoke mode: N = 64 128, 1 repetition, short microbenchmarks\n"
        "  --sweep        the size sweep: GFLOP/s of fp32, fp64_6, fp64_21 and OpenBLAS over --sizes\n"
        "                 (default 256 384 512 768 1000 1024 1536 2000 2048 3000 4096), 3 repetitions,\n"
        "                 flags a drop of more than 15%% below the best smaller size of a route\n"
        "  --first-call N the child mode of bench.sh's first-call section: run under LD_PRELOAD of the\n"
        "                 interposer, times the process's first routed cblas call of order N and the next ones;\n"
        "                 with --baseline, run without it: OpenBLAS's own first call\n"
        "  --first-call-summary CSV  medians over the first-call children's rows, and the verdicts\n"
        "  --amx-counts N the amx-counts mode: one call per route at N on the amx backend,\n"
        "                 counted by the trap harness (run under LD_PRELOAD=libamxemu.so)\n");
    std::exit(rc);
}

std::vector<int> parse_ints(const std::string& s) {
    std::vector<int> v;
    std::string t = s;
    for (char& ch : t)
        if (ch == ',') ch = ' ';
    std::istringstream in(t);
    int x;
    while (in >> x) {
        if (x < 1) usage(2);
        v.push_back(x);
    }
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    std::vector<int> sizes = {256, 512, 1024, 2048};
    std::vector<Shape> extra;
    bool sizes_given = false;
    for (int q = 1; q < argc; ++q) {
        const std::string a = argv[q];
        auto value = [&]() -> std::string {
            if (q + 1 >= argc) usage(2);
            return argv[++q];
        };
        if (a == "--quick") o.quick = true;
        else if (a == "--sizes") { sizes = parse_ints(value()); sizes_given = true; }
        else if (a == "--shapes") {
            std::istringstream in(value());
            std::string w;
            while (in >> w) {
                Shape s{};
                if (std::sscanf(w.c_str(), "%dx%dx%d", &s.m, &s.n, &s.k) != 3 || s.m < 1 || s.n < 1 || s.k < 1)
                    usage(2);
                extra.push_back(s);
            }
        } else if (a == "--backend") {
            if (!kernels::parse_backend(value().c_str(), &o.backend)) usage(2);
        } else if (a == "--reps") o.reps = std::max(1, std::atoi(value().c_str()));
        else if (a == "--threads") o.threads = std::max(1, std::atoi(value().c_str()));
        else if (a == "--out") o.out = value();
        else if (a == "--interposer") o.interposer = value();
        else if (a == "--amx-counts") o.amx_counts_n = std::max(1, std::atoi(value().c_str()));
        else if (a == "--sweep") o.sweep = true;
        else if (a == "--first-call") o.first_call_n = std::max(1, std::atoi(value().c_str()));
        else if (a == "--route") o.first_call_route = value();
        else if (a == "--baseline") o.first_call_baseline = true;
        else if (a == "--first-call-summary") o.first_call_summary = value();
        else if (a == "--help" || a == "-h") usage(0);
        else usage(2);
    }
    if (o.sweep) {
        if (!sizes_given) sizes = {256, 384, 512, 768, 1000, 1024, 1536, 2000, 2048, 3000, 4096};
        if (o.quick && !sizes_given) sizes = {64, 96, 128};
        o.reps = 3;
    }
    if (o.quick) {
        if (!sizes_given && !o.sweep) sizes = {64, 128};
        o.reps = 1;
        o.sample = 64;
        o.forward_pairs = 21;
        o.memcpy_bytes = std::size_t(32) << 20;
        o.peak_seconds = 0.05;
    }
    for (int n : sizes) o.shapes.push_back({n, n, n});
    o.shapes.insert(o.shapes.end(), extra.begin(), extra.end());
    if (o.threads == 0) o.threads = omp_get_num_procs();
    return o;
}

// One CSV row (and one table line).
struct Row {
    Shape s{};
    Route route{};
    std::string backend, input, status = "ok";
    double time_s = NAN, gflops = NAN, speedup = NAN;
    Errors vs_blas{NAN, NAN}, vs_exact{NAN, NAN};
    double split_pack_s = NAN, compute_s = NAN, split_pack_bytes = NAN, split_pack_gbs = NAN;
    double scan_s = NAN, scan_frac = NAN;
    double recon_s = NAN;  // reconstruction (part of compute_s)
    int reps = 0;
};

int ru32(int x) { return (x + 31) / 32 * 32; }

// Bytes that split + pack moves, by this benchmark's definition: the FP input read once
// (m*k + k*n values) plus every packed BF16 component buffer the route writes, once (slices x
// (ru32(m) + ru32(n)) x ru32(k) x 2 bytes; ru32 = rounded up to 32).
double sp_bytes(const Shape& s, Route r) {
    const double in = (double(s.m) * s.k + double(s.k) * s.n) * (route_is_fp64(r) ? 8 : 4);
    const double out = route_slices(r) * 2.0 * (double(ru32(s.m)) + ru32(s.n)) * ru32(s.k);
    return in + out;
}

// memcpy bandwidth of all threads at once, each copying its own part; GB/s counts bytes read
// plus bytes written (2 x size), as split + pack does. Median of `reps`.
double memcpy_gbs(std::size_t bytes, int threads, int reps) {
    std::vector<char> src(bytes, 1), dst(bytes, 2);
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
        const double t0 = now_s();
#pragma omp parallel num_threads(threads)
        {
            const std::size_t part = bytes / omp_get_num_threads(), lo = part * omp_get_thread_num();
            std::memcpy(dst.data() + lo, src.data() + lo, part);
        }
        if (r > 0) t.push_back(now_s() - t0);  // the first pass is a warm-up
    }
    __asm__ volatile("" : : "r"(dst.data()) : "memory");
    return 2.0 * bytes / median(t) / 1e9;
}

// The one-way latency of handing a cache line from one thread to another (two OpenMP threads
// taking turns on one atomic; median of 5 rounds of 100000 round trips), in ns; 0 with fewer
// than 2 threads. It tells where the threads' cores lie: on this project's 2-core VM it reads
// about 50 ns at some times and about 200 ns at others (the host moves the virtual CPUs between
// a shared and separate last-level caches), and a pack into lines the other core holds after a
// compute phase costs up to twice as much in the second case (docs/bench/coherence.txt). So
// the split + pack rows are only comparable between runs that read the same here.
double line_transfer_ns(int threads) {
    if (threads < 2) return 0;
    constexpr int kTrips = 100000;
    alignas(64) static std::atomic<int> flag;
    std::vector<double> t;
    for (int round = 0; round < 5; ++round) {
        flag.store(0);
        double seconds = 0;
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 0) {
                const double t0 = now_s();
                for (int i = 0; i < kTrips; ++i) {
                    flag.store(2 * i + 1, std::memory_order_release);
                    while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
                    }
                }
                seconds = now_s() - t0;
            } else {
                for (int i = 0; i < kTrips; ++i) {
                    while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
                    }
                    flag.store(2 * i + 2, std::memory_order_release);
                }
            }
        }
        t.push_back(1e9 * seconds / (2.0 * kTrips));
    }
    return median(t);
}

// The problem of one (shape, input class), in both precisions, with its references.
struct Problem {
    Shape s;
    std::vector<double> ad, bd, ref_d, absab_d, absab_f;
    std::vector<float> af, bf, ref_f;
    ExactSample ex_d, ex_f;
};

void abs_product(const Shape& s, const std::vector<double>& a, const std::vector<double>& b, std::vector<double>* out) {
    std::vector<double> aa(a.size()), bb(b.size());
    for (std::size_t q = 0; q < a.size(); ++q) aa[q] = std::fabs(a[q]);
    for (std::size_t q = 0; q < b.size(); ++q) bb[q] = std::fabs(b[q]);
    out->assign(std::size_t(s.m) * s.n, 0.0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, aa.data(), s.m, bb.data(), s.k, 0.0,
                out->data(), s.m);
}

Problem make_problem(const Shape& s, InputClass c, int sample) {
    Problem p;
    p.s = s;
    make_inputs(c, s, 1000 + 7 * int(c), &p.ad, &p.bd);
    p.af.assign(p.ad.begin(), p.ad.end());
    p.bf.assign(p.bd.begin(), p.bd.end());
    p.ref_d.assign(std::size_t(s.m) * s.n, 0.0);
    p.ref_f.assign(std::size_t(s.m) * s.n, 0.f);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, p.ad.data(), s.m, p.bd.data(), s.k,
                0.0, p.ref_d.data(), s.m);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, p.af.data(), s.m, p.bf.data(), s.k,
                0.f, p.ref_f.data(), s.m);
    abs_product(s, p.ad, p.bd, &p.absab_d);
    const std::vector<double> afd(p.af.begin(), p.af.end()), bfd(p.bf.begin(), p.bf.end());
    abs_product(s, afd, bfd, &p.absab_f);
    p.ex_d = exact_sample(s, p.ad, p.bd, sample, 99);
    p.ex_f = exact_sample(s, p.af, p.bf, sample, 99);
    return p;
}

// Runs one route once into c; returns the forward reason or nullptr.
const char* run_route(Route r, const Problem& p, const Options& o, std::vector<float>* cf, std::vector<double>* cd,
                      kernels::PhaseTimes* times) {
    const Shape& s = p.s;
    if (r == Route::openblas_sgemm) {
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, p.af.data(), s.m, p.bf.data(),
                    s.k, 0.f, cf->data(), s.m);
        return nullptr;
    }
    if (r == Route::openblas_dgemm) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, p.ad.data(), s.m, p.bd.data(),
                    s.k, 0.0, cd->data(), s.m);
        return nullptr;
    }
    kernels::RunOptions opt;
    opt.backend = o.backend;
    opt.threads = o.threads;
    opt.fp64_products = route_products(r);
    opt.times = times;
    opt.amx_emulator = kernels::amx_emulator_present();
    if (route_is_fp64(r))
        return emulate_gemm(
            {'N', 'N', s.m, s.n, s.k, 1.0, p.ad.data(), s.m, p.bd.data(), s.k, 0.0, cd->data(), s.m}, opt);
    return emulate_gemm(
        {'N', 'N', s.m, s.n, s.k, 1.f, p.af.data(), s.m, p.bf.data(), s.k, 0.f, cf->data(), s.m}, opt);
}

// The domain check a routed call makes before the kernels run, on the call's threads as the
// library does it (shim/gemm_dispatch.h).
const char* domain_scan(Route r, const Problem& p, int threads) {
    const Shape& s = p.s;
    if (route_is_fp64(r))
        return check_domain<double>(
            {'N', 'N', s.m, s.n, s.k, 1.0, p.ad.data(), s.m, p.bd.data(), s.k, 0.0, nullptr, s.m}, threads);
    return check_domain<float>({'N', 'N', s.m, s.n, s.k, 1.f, p.af.data(), s.m, p.bf.data(), s.k, 0.f, nullptr, s.m},
                               threads);
}

// Accuracy of every route on one problem; timings too when `timed`.
void measure_problem(const Problem& p, InputClass c, bool timed, const Options& o, std::vector<Row>* rows) {
    const Shape& s = p.s;
    std::vector<float> cf(std::size_t(s.m) * s.n);
    std::vector<double> cd(std::size_t(s.m) * s.n);
    double base_s = NAN, base_d = NAN;
    bool real_blas_ran = true;  // make_problem's references were OpenBLAS calls
    for (Route r : kAllRoutes) {
        Row row;
        row.s = s;
        row.route = r;
        row.backend = route_is_baseline(r) ? "openblas" : kernels::backend_name(o.backend);
        row.input = input_name(c);
        const bool fp64 = route_is_fp64(r);
        if (route_is_baseline(r)) {
            real_blas_ran = true;
        } else if (timed && real_blas_ran) {
            wait_for_real_blas_threads_to_sleep();  // before the route's first call, its warm-up
            real_blas_ran = false;
        }
        if (!route_is_baseline(r)) {
            if (const char* why = domain_scan(r, p, o.threads)) {
                row.status = std::string("forwarded:") + why;
                rows->push_back(row);
                continue;
            }
        }
        if (const char* why = run_route(r, p, o, &cf, &cd, nullptr)) {
            row.status = std::string("forwarded:") + why;
            rows->push_back(row);
            continue;
        }
        if (fp64) {
            row.vs_blas = errors_full(cd, p.ref_d, p.absab_d);
            row.vs_exact = errors_sampled(cd, s.m, p.ex_d);
        } else {
            row.vs_blas = errors_full(cf, p.ref_f, p.absab_f);
            row.vs_exact = errors_sampled(cf, s.m, p.ex_f);
        }
        if (timed) {
            std::vector<double> t, sp, cp, scan, rc;
            for (int q = 0; q < o.reps; ++q) {
                kernels::PhaseTimes pt;
                const double t0 = now_s();
                run_route(r, p, o, &cf, &cd, &pt);
                t.push_back(now_s() - t0);
                sp.push_back(pt.split_pack_s);
                cp.push_back(pt.compute_s);
                rc.push_back(pt.reconstruct_s);
                if (!route_is_baseline(r)) {
                    const double u0 = now_s();
                    domain_scan(r, p, o.threads);
                    scan.push_back(now_s() - u0);
                }
            }
            row.reps = o.reps;
            row.time_s = median(t);
            row.gflops = 2.0 * s.m * s.n * s.k / row.time_s / 1e9;
            if (r == Route::openblas_sgemm) base_s = row.time_s;
            if (r == Route::openblas_dgemm) base_d = row.time_s;
            row.speedup = (fp64 ? base_d : base_s) / row.time_s;
            if (!route_is_baseline(r)) {
                row.split_pack_s = median(sp);
                row.compute_s = median(cp);
                row.recon_s = median(rc);
                row.split_pack_bytes = sp_bytes(s, r);
                row.split_pack_gbs = row.split_pack_bytes / row.split_pack_s / 1e9;
                row.scan_s = median(scan);
                row.scan_frac = row.scan_s / row.time_s;
            }
        }
        rows->push_back(row);
    }
}

std::string shape_name(const Shape& s) {
    char b[64];
    if (s.square()) std::snprintf(b, sizeof b, "%d", s.n);
    else std::snprintf(b, sizeof b, "%dx%dx%d", s.m, s.n, s.k);
    return b;
}

void write_csv(const std::string& path, const std::vector<Row>& rows, int threads) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "amxblas_bench: cannot write %s\n", path.c_str());
        std::exit(1);
    }
    std::fprintf(f, "m,n,k,route,backend,input,status,time_s,gflops,speedup,eF,escaled,eF_exact,escaled_exact,"
                    "split_pack_s,compute_s,split_pack_share,split_pack_bytes,split_pack_gbs,domain_scan_s,"
                    "domain_scan_frac,reconstruct_s,reps,threads\n");
    for (const Row& r : rows)
        std::fprintf(f, "%d,%d,%d,%s,%s,%s,%s,%.6e,%.4f,%.4f,%.3e,%.3e,%.3e,%.3e,%.6e,%.6e,%.4f,%.0f,%.3f,%.6e,%.5f,%.6e,%d,%d\n",
                     r.s.m, r.s.n, r.s.k, route_name(r.route), r.backend.c_str(), r.input.c_str(), r.status.c_str(),
                     r.time_s, r.gflops, r.speedup, r.vs_blas.eF, r.vs_blas.escaled, r.vs_exact.eF,
                     r.vs_exact.escaled, r.split_pack_s, r.compute_s,
                     r.split_pack_s / (r.split_pack_s + r.compute_s), r.split_pack_bytes, r.split_pack_gbs, r.scan_s,
                     r.scan_frac, r.recon_s, r.reps, threads);
    std::fclose(f);
}

// A table cell: "-" where the column does not apply (the baselines have no split/pack and are
// their own OpenBLAS reference).
std::string cell(double v, bool not_applicable, const char* format = "%.2e") {
    if (not_applicable) return "-";
    char b[32];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

void print_tables(const std::vector<Row>& rows, const Options& o) {
    std::printf("\n== Performance and accuracy, input uniform, %d threads, backend %s, median of %d ==\n",
                o.threads, kernels::backend_name(o.backend), o.reps);
    std::printf("%-9s %-15s %10s %8s %7s %9s %9s %9s %9s %6s %8s %6s %6s\n", "N", "route", "time_ms", "GF/s", "speedup",
                "eF", "escaled", "eF_exact", "esc_exact", "sp+pk%", "sp+pkGB/s", "scan%", "recon%");
    for (const Row& r : rows) {
        if (r.input != "uniform") continue;
        if (r.status != "ok") {
            std::printf("%-9s %-15s %s\n", shape_name(r.s).c_str(), route_name(r.route), r.status.c_str());
            continue;
        }
        const bool base = route_is_baseline(r.route);
        std::printf("%-9s %-15s %10.3f %8.2f %7.3f %9s %9s %9.2e %9.2e %6s %8s %6s %6s\n", shape_name(r.s).c_str(),
                    route_name(r.route), 1e3 * r.time_s, r.gflops, r.speedup, cell(r.vs_blas.eF, base).c_str(),
                    cell(r.vs_blas.escaled, base).c_str(), r.vs_exact.eF, r.vs_exact.escaled,
                    cell(100 * r.split_pack_s / (r.split_pack_s + r.compute_s), base, "%.1f").c_str(),
                    cell(r.split_pack_gbs, base, "%.2f").c_str(), cell(100 * r.scan_frac, base, "%.2f").c_str(),
                    cell(100 * r.recon_s / (r.split_pack_s + r.compute_s), base, "%.1f").c_str());
    }
    for (InputClass c : kAllInputs) {
        if (c == InputClass::uniform) continue;
        std::printf("\n== Accuracy, input %s: %s ==\n", input_name(c), input_description(c));
        std::printf("%-9s %-15s %9s %9s %9s %9s\n", "N", "route", "eF", "escaled", "eF_exact", "esc_exact");
        for (const Row& r : rows) {
            if (r.input != input_name(c)) continue;
            if (r.status != "ok") {
                std::printf("%-9s %-15s %s\n", shape_name(r.s).c_str(), route_name(r.route), r.status.c_str());
                continue;
            }
            const bool base = route_is_baseline(r.route);
            std::printf("%-9s %-15s %9s %9s %9.2e %9.2e\n", shape_name(r.s).c_str(), route_name(r.route),
                        cell(r.vs_blas.eF, base).c_str(), cell(r.vs_blas.escaled, base).c_str(), r.vs_exact.eF,
                        r.vs_exact.escaled);
        }
    }
}

// Against the paper's Table 4 (tests/common/table4.h), for the five variants it measured.
void print_table4(const std::vector<Row>& rows) {
    bool header = false;
    for (const Row& r : rows) {
        if (r.input != "uniform" || r.status != "ok" || route_is_baseline(r.route) || !r.s.square()) continue;
        const test::PaperRow* p = test::paper_row(r.s.n);
        const int q = test::paper_column(route_name(r.route));
        if (!p || q < 0) continue;
        if (!header) {
            std::printf("\n== Against the paper's Table 4 (uniform; here vs OpenBLAS, paper vs oneMKL) ==\n");
            std::printf("%-6s %-8s %10s %10s %10s %10s\n", "N", "route", "eF", "eF_paper", "escaled", "esc_paper");
            header = true;
        }
        std::printf("%-6d %-8s %10.2e %10.2e %10.2e %10.2e\n", r.s.n, route_name(r.route), r.vs_blas.eF, p->e[q].eF,
                    r.vs_blas.escaled, p->e[q].escaled);
    }
}


int run_main(const Options& o) {
    std::printf("amxblas_bench: OpenBLAS core %s, %d threads (OpenBLAS and emulation), backend %s "
                "(built %d, runnable on this CPU %d)\n",
                openblas_get_corename(), o.threads, kernels::backend_name(o.backend),
                int(kernels::backend_built(o.backend)), int(kernels::backend_runnable_on_cpu(o.backend)));
    if (o.backend == kernels::Backend::amx && !kernels::amx_emulator_present() &&
        !kernels::backend_runnable_on_cpu(kernels::Backend::amx)) {
        std::printf("the amx backend cannot run here; use --amx-counts under the trap harness for counts\n");
        return 0;
    }
    if (o.backend == kernels::Backend::amx)
        std::printf("note: amx under the trap harness: times are the emulator's, not AMX's; use the counts\n");
    std::printf("inputs:\n");
    for (InputClass c : kAllInputs) std::printf("  %-12s %s\n", input_name(c), input_description(c));
    std::printf("metrics (baselines: only *_exact applies): eF = ||C-Cref||_F/||Cref||_F, escaled = max |C-Cref|_ij/(|A||B|)_ij; Cref = OpenBLAS of\n"
                "the same precision; *_exact: Cref = exact dot products (__float128) on %d random (i,j)\n",
                o.sample);
    std::printf("split+pack bytes = FP input read once ((mk+kn) x 4 or 8 B) + BF16 component buffers written\n"
                "once (slices x (ru32(m)+ru32(n)) x ru32(k) x 2 B; the slices the route writes: 3 for FP32, d for FP64-d(d+1)/2,\n"
                "so 3 for FP64-6 and 6 for FP64-21); GB/s = bytes/split_pack_s\n"
                "(the FP64 split_pack_s also includes its exponent scan, a second read of the input)\n");
    std::fflush(stdout);
    openblas_set_num_threads(o.threads);

    const double mc_all = memcpy_gbs(o.memcpy_bytes, o.threads, o.quick ? 3 : 7);
    const double mc_one = memcpy_gbs(o.memcpy_bytes, 1, o.quick ? 3 : 7);
    const double lt_before = line_transfer_ns(o.threads);
    std::printf("\nmemcpy %zu MiB (read + write counted): %.2f GB/s on %d threads, %.2f GB/s on 1 thread\n",
                o.memcpy_bytes >> 20, mc_all, o.threads, mc_one);
    std::printf("cache line handed between 2 threads: %.0f ns one way\n", lt_before);
    std::fflush(stdout);

    std::vector<Row> rows;
    for (const Shape& s : o.shapes) {
        for (InputClass c : kAllInputs) {
            const Problem p = make_problem(s, c, o.sample);
            measure_problem(p, c, c == InputClass::uniform, o, &rows);
        }
        std::printf("done N = %s\n", shape_name(s).c_str());
        std::fflush(stdout);
    }
    // The machine again after the timed rows: the split + pack verdicts below use the memcpy of
    // the start, and these say whether the machine stayed as it was meanwhile.
    const double mc_after = memcpy_gbs(o.memcpy_bytes, o.threads, o.quick ? 3 : 7);
    const double lt_after = line_transfer_ns(o.threads);
    std::printf("after the timed rows: memcpy %.2f GB/s on %d threads; cache line handed between 2 threads: %.0f ns\n",
                mc_after, o.threads, lt_after);
    const std::string csv = o.out + "/results.csv";
    write_csv(csv, rows, o.threads);
    print_tables(rows, o);
    print_table4(rows);

    std::printf("\n== VDPBF16PS peak and the avx512 micro-kernel (in cache, one BK = 256 panel; best of 3) ==\n");
    // Checked here, in a file compiled for any x86-64: see bench_peak_avx512bf16.cc.
    const bool peak_runs = kernels::backend_built(kernels::Backend::avx512) &&
                           kernels::backend_runnable_on_cpu(kernels::Backend::avx512);
    const PeakResult pk = peak_runs ? measure_peak_and_microkernel(o.threads, o.peak_seconds) : PeakResult{};
    if (pk.ran) {
        std::printf("unit: VDPBF16PS (zmm) instructions per second; a kernel's rate counts 1024 per 32x32x32 K step\n");
        std::printf("%-22s %14s %14s\n", "", "1 thread", "all threads");
        std::printf("%-22s %12.3fG %12.3fG\n", "peak", pk.peak_1t / 1e9, pk.peak_all / 1e9);
        std::printf("%-22s %12.3fG %12.3fG   (%5.1f%% / %5.1f%% of peak)\n", "fp32_chain", pk.chain_1t / 1e9,
                    pk.chain_all / 1e9, 100 * pk.chain_1t / pk.peak_1t, 100 * pk.chain_all / pk.peak_all);
        std::printf("%-22s %12.3fG %12.3fG   (%5.1f%% / %5.1f%% of peak)\n", "product", pk.product_1t / 1e9,
                    pk.product_all / 1e9, 100 * pk.product_1t / pk.peak_1t, 100 * pk.product_all / pk.peak_all);
        std::printf("peak in BF16 flops: %.1f GFLOP/s per core (2 x 32 per instruction)\n", pk.peak_1t * 64 / 1e9);
        // The INT8 engine's instruction beside it (bench_peak_avx512vnni.cc, checked here too).
        const VnniPeakResult vn = kernels::cpu_has_avx512_vnni() ? measure_vnni_peak(o.peak_seconds) : VnniPeakResult{};
        if (vn.ran) {
            std::printf("%-22s %12.3fG %14s   (%.2f x VDPBF16PS instructions, %.2f x in multiply-adds)\n",
                        "VPDPBUSD peak", vn.peak_1t / 1e9, "", vn.peak_1t / pk.peak_1t, 2 * vn.peak_1t / pk.peak_1t);
            std::printf("%-22s %12.3fG %14s   (%5.1f%% of VPDPBUSD peak; unit: VPDPBUSD, 1024 per 32x32x64 K step)\n",
                        "product_s8", vn.product_s8_1t / 1e9, "", 100 * vn.product_s8_1t / vn.peak_1t);
        } else {
            std::printf("AVX-512 VNNI not runnable here: VPDPBUSD peak skipped\n");
        }
        if (std::FILE* f = std::fopen((o.out + "/microkernel.csv").c_str(), "w")) {
            std::fprintf(f, "what,threads,vdpbf16ps_per_s,fraction_of_peak\n");
            std::fprintf(f, "peak,1,%.4e,1\npeak,%d,%.4e,1\n", pk.peak_1t, o.threads, pk.peak_all);
            std::fprintf(f, "fp32_chain,1,%.4e,%.4f\nfp32_chain,%d,%.4e,%.4f\n", pk.chain_1t, pk.chain_1t / pk.peak_1t,
                         o.threads, pk.chain_all, pk.chain_all / pk.peak_all);
            std::fprintf(f, "product,1,%.4e,%.4f\nproduct,%d,%.4e,%.4f\n", pk.product_1t, pk.product_1t / pk.peak_1t,
                         o.threads, pk.product_all, pk.product_all / pk.peak_all);
            std::fclose(f);
        }
    } else {
        std::printf("AVX-512 BF16 not runnable or not built here: skipped\n");
    }

    std::printf("\n== Interposer overhead on forwarded dgemm_ (direct OpenBLAS vs through libamxblas.so) ==\n");
    std::string why;
    const std::vector<ForwardRow> fw =
        measure_forwarding(o.interposer, {4, 16, 64, 256}, o.forward_pairs, &why);
    if (fw.empty()) {
        std::printf("skipped: %s\n", why.c_str());
    } else {
        std::printf("%d interleaved batch pairs, medians per call\n", o.forward_pairs);
        std::printf("%6s %12s %14s %10s %8s\n", "N", "direct_ns", "interposed_ns", "added_ns", "ratio");
        std::FILE* f = std::fopen((o.out + "/forwarding.csv").c_str(), "w");
        if (f) std::fprintf(f, "n,direct_ns,interposed_ns,added_ns,ratio\n");
        for (const ForwardRow& r : fw) {
            std::printf("%6d %12.1f %14.1f %10.1f %8.4f\n", r.n, r.direct_ns, r.interposed_ns, r.added_ns, r.ratio);
            if (f) std::fprintf(f, "%d,%.2f,%.2f,%.2f,%.5f\n", r.n, r.direct_ns, r.interposed_ns, r.added_ns, r.ratio);
        }
        if (f) std::fclose(f);
    }

    std::printf("\n== Targets (informative, never asserted%s) ==\n", o.quick ? "; --quick: not meaningful" : "");
    const Shape* big = nullptr;
    for (const Shape& s : o.shapes)
        if (s.square() && (!big || s.n > big->n)) big = &s;
    // Split + pack at N = 1024 and 2048 (or the largest N when the run has neither).
    auto sp_target_n = [&](int n) {
        bool has = false;
        for (const Shape& s : o.shapes) has = has || (s.square() && (s.n == 1024 || s.n == 2048));
        return has ? (n == 1024 || n == 2048) : (big && n == big->n);
    };
    for (const Row& r : rows) {
        if (!big || r.input != "uniform" || r.status != "ok" || route_is_baseline(r.route)) continue;
        if (!r.s.square() || !sp_target_n(r.s.n) ||
            (r.route != Route::fp32 && r.route != Route::fp64_6 && r.route != Route::fp64_21))
            continue;
        char b[200];
        std::snprintf(b, sizeof b, "split+pack %s N=%d: %.2f GB/s >= half of memcpy (%.2f GB/s)", route_name(r.route),
                      r.s.n, r.split_pack_gbs, mc_all / 2);
        verdict(r.split_pack_gbs >= mc_all / 2, b);
    }
    std::printf("      (memcpy %.2f -> %.2f GB/s and line handover %.0f -> %.0f ns from before to after the timed rows)\n",
                mc_all, mc_after, lt_before, lt_after);
    if (pk.ran) {
        char b[200];
        std::snprintf(b, sizeof b, "avx512 fp32_chain 1 thread: %.1f%% of VDPBF16PS peak >= 60%%",
                      100 * pk.chain_1t / pk.peak_1t);
        verdict(pk.chain_1t >= 0.6 * pk.peak_1t, b);
        std::snprintf(b, sizeof b, "avx512 product 1 thread: %.1f%% of VDPBF16PS peak >= 60%%",
                      100 * pk.product_1t / pk.peak_1t);
        verdict(pk.product_1t >= 0.6 * pk.peak_1t, b);
    }
    for (const ForwardRow& r : fw) {
        char b[200];
        if (r.n == 64) {
            std::snprintf(b, sizeof b, "forwarding N=64: %+.2f%% added < 2%%", 100 * (r.ratio - 1));
            verdict(r.ratio - 1 < 0.02, b);
        } else if (r.n == 4) {
            std::snprintf(b, sizeof b, "forwarding N=4: %.0f ns added < 500 ns", r.added_ns);
            verdict(r.added_ns < 500, b);
        }
    }
    // The whole-call model, from the phases measured at the largest square N.
    MeasuredPhases mp;
    double fp64_values = 0, fp64_recon = 0;
    for (const Row& r : rows) {
        if (!big || r.input != "uniform" || r.status != "ok" || route_is_baseline(r.route) || r.s.n != big->n ||
            !r.s.square())
            continue;
        const double cells = double(ru32(r.s.m)) * ru32(r.s.n), panels = double((r.s.k + 255) / 256);
        // The scan reads op(A) and op(B) once: (mk + kn) entries.
        const double scan_bytes = (double(r.s.m) * r.s.k + double(r.s.k) * r.s.n) * (route_is_fp64(r.route) ? 8 : 4);
        if (r.route == Route::fp32) {
            mp.scan_bytes_per_core_s_fp32 = scan_bytes / (r.scan_s * o.threads);
            mp.sp_bytes_per_core_s_fp32 = r.split_pack_bytes / (r.split_pack_s * o.threads);
            if (panels > 1) mp.recon_values_per_core_s_fp32 = cells * (panels - 1) / (r.recon_s * o.threads);
        } else {
            // Each FP64 route's own split + pack rate: the split's arithmetic grows with its slices.
            mp.sp_bytes_per_core_s_fp64[r.route] = r.split_pack_bytes / (r.split_pack_s * o.threads);
            if (r.route == Route::fp64_6) mp.scan_bytes_per_core_s_fp64 = scan_bytes / (r.scan_s * o.threads);
            fp64_values += route_products(r.route) * cells * panels;
            fp64_recon += r.recon_s;
        }
        mp.from_n = r.s.n;
    }
    if (fp64_recon > 0) mp.recon_values_per_core_s_fp64 = fp64_values / (fp64_recon * o.threads);
    if (mp.scan_bytes_per_core_s_fp32 > 0 && mp.scan_bytes_per_core_s_fp64 > 0 && mp.sp_bytes_per_core_s_fp32 > 0 &&
        !mp.sp_bytes_per_core_s_fp64.empty() && mp.recon_values_per_core_s_fp32 > 0 && mp.recon_values_per_core_s_fp64 > 0)
        print_amx_model(mp, o.threads, o.out + "/model.csv");
    else
        std::printf("\n== Whole-call AMX model: skipped (needs fp32 and fp64 rows at one N >= 512) ==\n");
    std::printf("\nwrote %s\n", csv.c_str());
    return 0;
}


// --sweep: GFLOP/s over many sizes, timing only; a route's rate may not drop more than 15%
// below the best of its smaller sizes.
int run_sweep(const Options& o) {
    constexpr Route kSweepRoutes[] = {Route::openblas_sgemm, Route::fp32, Route::openblas_dgemm, Route::fp64_6,
                                      Route::fp64_21};
    std::printf("amxblas_bench --sweep: %d threads, backend %s, median of %d after one warm-up, uniform inputs\n",
                o.threads, kernels::backend_name(o.backend), o.reps);
    openblas_set_num_threads(o.threads);
    std::FILE* csv = std::fopen((o.out + "/sweep.csv").c_str(), "w");
    if (csv) std::fprintf(csv, "n,route,time_s,gflops,split_pack_s,reconstruct_s,reps,threads\n");
    std::printf("%-6s %-15s %10s %8s %9s %9s\n", "N", "route", "time_ms", "GF/s", "sp+pk_ms", "recon_ms");
    std::vector<std::vector<std::pair<int, double>>> rate(std::size(kSweepRoutes));
    for (const Shape& s : o.shapes) {
        Problem p;
        p.s = s;
        make_inputs(InputClass::uniform, s, 1000, &p.ad, &p.bd);
        p.af.assign(p.ad.begin(), p.ad.end());
        p.bf.assign(p.bd.begin(), p.bd.end());
        std::vector<float> cf(std::size_t(s.m) * s.n);
        std::vector<double> cd(std::size_t(s.m) * s.n);
        for (std::size_t q = 0; q < std::size(kSweepRoutes); ++q) {
            const Route r = kSweepRoutes[q];
            if (!route_is_baseline(r) && route_is_baseline(kSweepRoutes[q - 1])) wait_for_real_blas_threads_to_sleep();
            kernels::PhaseTimes pt;
            if (const char* why = run_route(r, p, o, &cf, &cd, &pt)) {  // the warm-up
                std::printf("%-6s %-15s forwarded: %s\n", shape_name(s).c_str(), route_name(r), why);
                continue;
            }
            std::vector<double> t, sp, rc;
            for (int k = 0; k < o.reps; ++k) {
                const double t0 = now_s();
                run_route(r, p, o, &cf, &cd, &pt);
                t.push_back(now_s() - t0);
                sp.push_back(pt.split_pack_s);
                rc.push_back(pt.reconstruct_s);
            }
            const double ts = median(t), gf = 2.0 * s.m * s.n * double(s.k) / ts / 1e9;
            const bool base = route_is_baseline(r);
            std::printf("%-6s %-15s %10.3f %8.2f %9s %9s\n", shape_name(s).c_str(), route_name(r), 1e3 * ts, gf,
                        cell(1e3 * median(sp), base, "%.3f").c_str(), cell(1e3 * median(rc), base, "%.3f").c_str());
            if (csv)
                std::fprintf(csv, "%d,%s,%.6e,%.4f,%.6e,%.6e,%d,%d\n", s.n, route_name(r), ts, gf,
                             base ? NAN : median(sp), base ? NAN : median(rc), o.reps, o.threads);
            rate[q].push_back({s.n, gf});
        }
        std::fflush(stdout);
    }
    if (csv) std::fclose(csv);
    std::printf("\n== Targets (informative, never asserted%s) ==\n", o.quick ? "; --quick: not meaningful" : "");
    for (std::size_t q = 0; q < std::size(kSweepRoutes); ++q) {
        if (route_is_baseline(kSweepRoutes[q])) continue;
        std::vector<std::pair<int, double>> v = rate[q];
        std::sort(v.begin(), v.end());
        int cliffs = 0;
        double best = 0;
        int best_n = 0;
        for (const auto& [n, gf] : v) {
            if (best > 0 && gf < 0.85 * best) {
                char b[200];
                std::snprintf(b, sizeof b, "no cliff %s N=%d: %.2f GF/s is %.0f%% below %.2f at N=%d (limit 15%%)",
                              route_name(kSweepRoutes[q]), n, gf, 100 * (1 - gf / best), best, best_n);
                verdict(false, b);
                ++cliffs;
            }
            if (gf > best) best = gf, best_n = n;
        }
        if (cliffs == 0) {
            char b[200];
            std::snprintf(b, sizeof b, "no cliff %s: no size below 85%% of the best smaller size (%zu sizes)",
                          route_name(kSweepRoutes[q]), v.size());
            verdict(true, b);
        }
    }
    return 0;
}

}  // namespace

double split_pack_bytes(const Shape& s, Route r) { return sp_bytes(s, r); }

}  // namespace amxblas::bench

int main(int argc, char** argv) {
    using namespace amxblas::bench;
    const Options o = parse(argc, argv);
    if (o.amx_counts_n > 0)
        return run_amx_counts({o.amx_counts_n, o.amx_counts_n, o.amx_counts_n}, o.threads, o.out + "/amx_counts.csv");
    if (o.first_call_n > 0)
        return run_first_call(o.first_call_n, o.first_call_route, o.first_call_baseline, o.out + "/first_call.csv");
    if (!o.first_call_summary.empty()) return summarize_first_calls(o.first_call_summary);
    if (o.sweep) return run_sweep(o);
    return run_main(o);
}

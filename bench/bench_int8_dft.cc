// Part 4 of amxblas_bench_int8: the captured GEMM calls of a DFT code (.gemm files,
// scripts/replay/gemm_file.h; 16 of them in tests/data/dft-gemm/), each through INT8 auto and
// BF16 auto with routing forced (the kernels called directly for every call, whatever its
// size or shape), against OpenBLAS on the same call. A call either routes (certified) or is
// forwarded (its result is then OpenBLAS's, as the library would return). The error is
// scripts/replay/accuracy.h's measure() (max over all entries of |C - exact| / (|alpha||A||B| +
// |beta||C0|)); "within 2x" compares it with OpenBLAS's own on the same call.
#include <cblas.h>
#include <dirent.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <string>

#include "kernels/driver/routed_gemm.h"
#include "scripts/replay/accuracy.h"
#include "scripts/replay/gemm_file.h"
#include "bench/bench_int8.h"

namespace amxblas::bench {
namespace {

CBLAS_TRANSPOSE cblas_trans(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

struct Tally {
    int routed = 0, within = 0;
};

}  // namespace

const char* routed(const replay::GemmFile& g, const kernels::RunOptions& opt, std::vector<double>* c) {
    *c = g.c;
    return routed_in(g, opt, c);
}

const char* routed_in(const replay::GemmFile& g, const kernels::RunOptions& opt, std::vector<double>* c) {
    if (!g.complex) {
        const kernels::GemmArgs<double> a{g.transa, g.transb, g.m, g.n, g.k, g.alpha[0], g.a.data(), g.lda,
                                          g.b.data(), g.ldb, g.beta[0], c->data(), g.ldc};
        return kernels::emulate_gemm(a, opt);
    }
    using Z = std::complex<double>;
    const kernels::GemmArgs<Z> a{g.transa, g.transb, g.m, g.n, g.k, Z(g.alpha[0], g.alpha[1]),
                                 reinterpret_cast<const Z*>(g.a.data()), g.lda, reinterpret_cast<const Z*>(g.b.data()),
                                 g.ldb, Z(g.beta[0], g.beta[1]), reinterpret_cast<Z*>(c->data()), g.ldc};
    return kernels::emulate_gemm(a, opt);
}

void openblas(const replay::GemmFile& g, std::vector<double>* c) {
    *c = g.c;
    openblas_in(g, c);
}

void openblas_in(const replay::GemmFile& g, std::vector<double>* c) {
    if (!g.complex)
        cblas_dgemm(CblasColMajor, cblas_trans(g.transa), cblas_trans(g.transb), g.m, g.n, g.k, g.alpha[0], g.a.data(),
                    g.lda, g.b.data(), g.ldb, g.beta[0], c->data(), g.ldc);
    else
        cblas_zgemm(CblasColMajor, cblas_trans(g.transa), cblas_trans(g.transb), g.m, g.n, g.k, g.alpha, g.a.data(),
                    g.lda, g.b.data(), g.ldb, g.beta, c->data(), g.ldc);
}

std::vector<std::string> gemm_files(const std::string& dir) {
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (const dirent* e = readdir(d)) {
            const std::string name = e->d_name;
            if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gemm") == 0) files.push_back(name);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    return files;
}

void run_int8_dft(const Int8Options& o) {
    std::vector<std::string> files = gemm_files(o.dft_dir);
    if (o.quick && files.size() > 4) files.resize(4);
    std::printf("\n== Captured DFT calls (%s: %zu .gemm files%s), INT8 auto and BF16 auto, routing forced, backend %s, "
                "%d threads; error: scripts/replay/accuracy.h measure() against OpenBLAS's on the same call ==\n",
                o.dft_dir.c_str(), files.size(), o.quick ? ", the first 4 (--quick)" : "", kernels::backend_name(o.backend),
                o.threads);
    std::printf("calls listed: those forwarded by either engine or with an error above 2x OpenBLAS's\n");
    std::printf("%-34s %-28s %-28s %10s\n", "call", "int8 auto", "bf16 auto", "openblas");
    openblas_set_num_threads(o.threads);
    Tally t8, t16;
    int total = 0, skipped = 0;
    for (const std::string& name : files) {
        replay::GemmFile g;
        std::string err;
        if (!replay::read_gemm_file((o.dft_dir + "/" + name).c_str(), &g, &err) || g.single) {
            std::printf("%-34s skipped: %s\n", name.c_str(), g.single ? "single precision" : err.c_str());
            ++skipped;
            continue;
        }
        ++total;
        std::vector<double> cref, c;
        openblas(g, &cref);
        const double ob = replay::measure(g, cref).error;
        char col[2][64];
        bool show = false;
        for (int e = 0; e < 2; ++e) {
            kernels::Fp64AutoReport rep;
            const auto engine = e == 0 ? kernels::Fp64Engine::int8 : kernels::Fp64Engine::bf16;
            const char* why = routed(g, int8_options(o, engine, kernels::kFp64Auto, nullptr, &rep), &c);
            const double err_e = replay::measure(g, why ? cref : c).error;
            const bool within = err_e <= 2 * ob;  // a forwarded call returns OpenBLAS's result
            Tally& tl = e == 0 ? t8 : t16;
            tl.routed += !why;
            tl.within += within;
            show = show || why || !within;
            if (why) std::snprintf(col[e], sizeof col[e], "fwd %s", why);
            else std::snprintf(col[e], sizeof col[e], "%2d %s, %.2e (%.1fx)", rep.products, e == 0 ? "moduli" : "prod.",
                               err_e, ob > 0 ? err_e / ob : 0.0);
        }
        if (show) std::printf("%-34s %-28s %-28s %10.2e\n", name.c_str(), col[0], col[1], ob);
    }
    if (total == 0) {
        std::printf("no double-precision .gemm files in %s\n", o.dft_dir.c_str());
        return;
    }
    std::printf("%d calls (%d skipped): int8 auto routed %d, forwarded %d, within 2x of OpenBLAS %d; bf16 auto routed %d, "
                "forwarded %d, within 2x %d\n",
                total, skipped, t8.routed, total - t8.routed, t8.within, t16.routed, total - t16.routed, t16.within);
    char what[200];
    for (int e = 0; e < 2; ++e) {
        const Tally& tl = e == 0 ? t8 : t16;
        const char* eng = e == 0 ? "int8" : "bf16";
        std::snprintf(what, sizeof what, "dft %s auto: %d of %d calls routed (%.1f%%), target >= 90%%", eng, tl.routed, total,
                      100.0 * tl.routed / total);
        verdict(tl.routed >= 0.9 * total, what);
        std::snprintf(what, sizeof what, "dft %s auto: %d of %d calls within 2x OpenBLAS's error (%.1f%%), target >= 95%%",
                      eng, tl.within, total, 100.0 * tl.within / total);
        verdict(tl.within >= 0.95 * total, what);
    }
    std::snprintf(what, sizeof what, "dft: int8 auto certifies %d calls, bf16 auto %d, target int8 >= bf16", t8.routed,
                  t16.routed);
    verdict(t8.routed >= t16.routed, what);
}

}  // namespace amxblas::bench

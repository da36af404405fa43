// amxblas-replay: runs GEMM calls stored in .gemm files (AMXBLAS_RECORD's, or captured ones) on
// the BLAS this program runs on and says how accurate each result is against the exact one.
// Under LD_PRELOAD=libamxblas.so the calls go through the library, which routes or forwards
// them as it would the program's; without it, to the BLAS the tool is linked with. See
// `amxblas-replay --help` and docs/using.md.
#include <fenv.h>
#include <xmmintrin.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "scripts/replay/accuracy.h"
#include "scripts/replay/blas_call.h"
#include "scripts/replay/gemm_file.h"

namespace amxblas::replay {
namespace {

constexpr const char* kUsage =
    "Usage: amxblas-replay [--against-openblas] [--openblas LIB] [--fenv MODE] FILE...\n"
    "\n"
    "Replays each GEMM call stored in FILE (a .gemm file written by AMXBLAS_RECORD, or captured in\n"
    "the same format) through the Fortran routine (sgemm_, dgemm_, cgemm_, zgemm_) of the BLAS this\n"
    "program runs on: the one it is linked with, or libamxblas.so when that is preloaded\n"
    "(LD_PRELOAD=libamxblas.so amxblas-replay FILE replays under the library, with its AMXBLAS_*\n"
    "settings and log). Prints, per file, the call and\n"
    "  error=     max over the entries of |C - C_exact| / (|alpha| (|op(A)||op(B)|) + |beta| |C0|)\n"
    "  bound=     max over the entries of |C - C_exact| / the GEMM's classical error bound\n"
    "             (gamma_K for real, gamma_{K+1} per part for complex, plus the alpha/beta update);\n"
    "             at most 1: every entry within it\n"
    "  checksum=  FNV-1a of C's M x N entries after the call, to compare results bit for bit\n"
    "against the exact result (every product exact, the sum rounded once).\n"
    "\n"
    "  --against-openblas  also replay each call on OpenBLAS itself, opened with dlopen (a\n"
    "                      preloaded library does not intercept it): openblas_error=,\n"
    "                      openblas_bound=, openblas_checksum=\n"
    "  --openblas LIB      the OpenBLAS to open (default libopenblas.so.0)\n"
    "  --fenv MODE         make each call under a caller's floating-point environment: traps\n"
    "                      (invalid, divide-by-zero and overflow unmasked, as gfortran's\n"
    "                      -ffpe-trap=invalid,zero,overflow: a trap ends the program with\n"
    "                      SIGFPE), upward, downward, towardzero (the rounding mode), ftz (FTZ\n"
    "                      and DAZ), nearest (the default environment); adds flags=, the\n"
    "                      invalid, divide-by-zero and overflow\n"
    "                      flags the call raised (none, or a list)\n"
    "\n"
    "Exit status: 0 when every file was replayed; 1 when a file could not be read or is not a\n"
    "well-formed .gemm file (the others are still replayed); 2 for a usage error or an OpenBLAS\n"
    "that cannot be loaded.\n";

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

std::string scalar(const GemmFile& g, const double* s) {
    char buf[80];
    if (g.complex) std::snprintf(buf, sizeof buf, "(%.17g,%.17g)", s[0], s[1]);
    else std::snprintf(buf, sizeof buf, "%.17g", s[0]);
    return buf;
}

// --fenv: the environment each call is made under, and what it raised.
struct CallerFenv {
    bool set = false;
    int rounding = FE_TONEAREST;
    int traps = 0;
    unsigned ftz_daz = 0;  // MXCSR bits
};

bool parse_fenv(const char* mode, CallerFenv* e) {
    e->set = true;
    if (!std::strcmp(mode, "nearest")) return true;  // the default environment: flags= only
    if (!std::strcmp(mode, "traps")) e->traps = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW;
    else if (!std::strcmp(mode, "upward")) e->rounding = FE_UPWARD;
    else if (!std::strcmp(mode, "downward")) e->rounding = FE_DOWNWARD;
    else if (!std::strcmp(mode, "towardzero")) e->rounding = FE_TOWARDZERO;
    else if (!std::strcmp(mode, "ftz")) e->ftz_daz = 0x8040;
    else return false;
    return true;
}

// Runs the call under e; returns the watched flags it raised ("none", or a list).
std::string call_under(const CallerFenv& e, const Blas& blas, const GemmFile& g, std::vector<double>* c) {
    fesetround(e.rounding);
    _mm_setcsr(_mm_getcsr() | e.ftz_daz);
    feclearexcept(FE_ALL_EXCEPT);
    if (e.traps) feenableexcept(e.traps);
    run_call(blas, g, c);
    const int raised = fetestexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
    fedisableexcept(FE_ALL_EXCEPT);
    feclearexcept(FE_ALL_EXCEPT);
    fesetround(FE_TONEAREST);
    _mm_setcsr(_mm_getcsr() & ~e.ftz_daz);
    std::string names;
    for (auto [flag, name] : {std::pair{FE_INVALID, "invalid"}, {FE_DIVBYZERO, "divbyzero"}, {FE_OVERFLOW, "overflow"}})
        if (raised & flag) names += (names.empty() ? "" : ",") + std::string(name);
    return names.empty() ? "none" : names;
}

// " error=... bound=... [flags=...] checksum=..." of one run, each key prefixed.
std::string run_fields(const Blas& blas, const GemmFile& g, const char* prefix, const CallerFenv& fenv) {
    std::vector<double> c;
    const std::string flags = call_under(fenv, blas, g, &c);
    const Accuracy acc = measure(g, c);
    char sum[40];
    std::snprintf(sum, sizeof sum, "%016" PRIx64, checksum(g, c));
    const std::string p = prefix;
    const std::string flagged = fenv.set ? " " + p + "flags=" + flags : "";
    if (!acc.defined)
        return " " + p + "error=n/a " + p + "bound=n/a" + flagged + " " + p + "checksum=" + sum;
    return " " + p + "error=" + number(acc.error) + " " + p + "bound=" + number(acc.bound) + flagged + " " + p +
           "checksum=" + sum;
}

int run(int argc, char** argv) {
    bool against_openblas = false;
    const char* openblas = "libopenblas.so.0";
    CallerFenv fenv;
    std::vector<const char*> files;
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (!std::strcmp(arg, "--against-openblas")) {
            against_openblas = true;
        } else if (!std::strcmp(arg, "--openblas")) {
            if (++i == argc) {
                std::fprintf(stderr, "amxblas-replay: --openblas needs a library\n");
                return 2;
            }
            openblas = argv[i];
        } else if (!std::strcmp(arg, "--fenv")) {
            if (++i == argc || !parse_fenv(argv[i], &fenv)) {
                std::fprintf(stderr, "amxblas-replay: --fenv needs traps, upward, downward, towardzero, ftz or nearest\n");
                return 2;
            }
        } else if (!std::strcmp(arg, "--")) {
            files.insert(files.end(), argv + i + 1, argv + argc);
            break;
        } else if (arg[0] == '-' && arg[1]) {
            std::fprintf(stderr, "amxblas-replay: unknown option %s\n%s", arg, kUsage);
            return 2;
        } else {
            files.push_back(arg);
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "amxblas-replay: no file given\n%s", kUsage);
        return 2;
    }
    const Blas resolved = resolved_blas();
    Blas reference;
    if (against_openblas) {
        std::string error;
        if (!opened_blas(openblas, &reference, &error)) {
            std::fprintf(stderr, "amxblas-replay: error: --against-openblas: %s\n", error.c_str());
            return 2;
        }
    }

    int status = 0;
    std::set<std::string> announced;
    for (const char* path : files) {
        GemmFile g;
        std::string error;
        if (!read_gemm_file(path, &g, &error)) {
            std::fprintf(stderr, "amxblas-replay: error: %s: %s\n", path, error.c_str());
            status = 1;
            continue;
        }
        // Which library answers, once per routine: the one thing a reader of the output needs
        // to know to tell a preloaded run from a plain one.
        if (announced.insert(g.routine).second) {
            std::printf("amxblas-replay: %s_ is %s\n", g.routine.c_str(),
                        defining_file(resolved.symbol(g.routine)).c_str());
            if (against_openblas)
                std::printf("amxblas-replay: openblas %s_ is %s\n", g.routine.c_str(),
                            defining_file(reference.symbol(g.routine)).c_str());
        }
        std::string line = std::string(path) + ": " + g.routine + " " + g.transa + " " + g.transb +
                           " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                           " k=" + std::to_string(g.k) + " alpha=" + scalar(g, g.alpha) +
                           " beta=" + scalar(g, g.beta);
        line += run_fields(resolved, g, "", fenv);
        if (against_openblas) line += run_fields(reference, g, "openblas_", fenv);
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);  // in step with the library's log when both go to one terminal
    }
    return status;
}

}  // namespace
}  // namespace amxblas::replay

int main(int argc, char** argv) { return amxblas::replay::run(argc, argv); }

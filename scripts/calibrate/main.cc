// amxblas-calibrate: measures the cost model's constants on this machine and writes them as a
// wisdom entry (docs/cost-model.md, "Wisdom"; `amxblas-run --calibrate` runs it).
//   amxblas-calibrate [--backend B] [--blas LIBRARY] [--out FILE] [--rounds R] [--print-key]
// The backend: --backend, else AMXBLAS_BACKEND, else the first this CPU runs (amx, avx512,
// reference); its phases are measured where it runs here (elsewhere only the real BLAS is). The
// real BLAS: --blas, else AMXBLAS_FALLBACK, else the library's default list (libopenblas.so.0,
// libblas.so.3): the one a program without a BLAS of its own gets. The threads: the routed
// calls' (AMXBLAS_NUM_THREADS, else OMP_NUM_THREADS, else the cores), given to the real BLAS
// too where it can take them. The file: --out, else AMXBLAS_WISDOM, else the per-user default;
// its entries for other keys are kept, the one for this key replaced. --print-key prints the
// entry's key and measures nothing.
// A separate program built from the library's archives rather than an export of
// libamxblas.so: the library exports only the BLAS symbols it takes over (shim/CMakeLists.txt).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "kernels/isa/backend.h"
#include "policy/wisdom.h"
#include "scripts/calibrate/blas_rates.h"
#include "scripts/calibrate/phases.h"
#include "shim/config.h"
#include "shim/hardware.h"
#include "shim/wisdom.h"

using namespace amxblas;
using namespace amxblas::calibrate;

namespace {

int usage(const char* why) {
    std::fprintf(stderr,
                 "amxblas-calibrate: %s\nusage: amxblas-calibrate [--backend B] [--blas LIBRARY] [--out FILE] "
                 "[--rounds R] [--print-key]\n",
                 why);
    return 2;
}

// The backend a program with these settings runs: the one asked for, else the first of the
// table this CPU runs.
kernels::Backend backend_here(const Settings& s, const Hardware& hw) {
    if (s.backend != BackendChoice::automatic) return kernels::kAllBackends[static_cast<int>(s.backend) - 1];
    for (kernels::Backend b : kernels::kAllBackends)
        if (hw.can_run(b)) return b;
    return kernels::Backend::reference;
}

// Creates the folders above path (the per-user default's ~/.local/share/amxblas).
void make_parents(const std::string& path) {
    for (std::size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
        ::mkdir(path.substr(0, at).c_str(), 0755);
}

// The file's text; false with errno's reason when it exists but cannot be read (its entries
// would be lost if it were replaced), true with "" when it does not exist.
bool read_file(const std::string& path, std::string* text, std::string* why) {
    text->clear();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return true;
    bool ok = fd >= 0;
    char buf[16384];
    ssize_t n = 0;
    while (ok && (n = ::read(fd, buf, sizeof buf)) != 0 && text->size() <= kWisdomMaxBytes) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) ok = false;
        else text->append(buf, n);
    }
    if (!ok) *why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return ok;
}

// Writes text to path through a temporary file and a rename, so that a program reading the
// file meanwhile sees the old one or the new one, never half of one.
bool write_file(const std::string& path, const std::string& text, std::string* why) {
    make_parents(path);
    // Named by host and pid: nodes sharing a home directory may run it at the same pid.
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const std::string tmp = path + ".tmp." + host + "." + std::to_string(getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    if (fd >= 0) ok = ::close(fd) == 0 && ok;
    if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
    if (!ok) {
        *why = std::strerror(errno);
        ::unlink(tmp.c_str());
    }
    return ok;
}

std::string utc_now() {
    char buf[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void print_key(const WisdomKey& k) {
    std::vector<WisdomEntry> one(1);
    one[0].key = k;
    const std::string text = format_wisdom(one);
    std::fputs(text.substr(text.find("entry\n")).c_str(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
    Settings s = settings();
    std::string blas_name, out;
    int rounds = 5;
    bool key_only = false, backend_given = false;
    kernels::Backend backend = kernels::Backend::reference;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "--backend") {
            const char* v = value();
            if (!v || !kernels::parse_backend(v, &backend)) return usage("--backend: amx, avx512 or reference");
            backend_given = true;
        } else if (a == "--blas") {
            const char* v = value();
            if (!v || !*v) return usage("--blas needs a library");
            blas_name = v;
        } else if (a == "--out") {
            const char* v = value();
            if (!v || !*v) return usage("--out needs a file");
            out = v;
        } else if (a == "--rounds") {
            const char* v = value();
            if (!v || (rounds = std::atoi(v)) < 1 || rounds > 100) return usage("--rounds: 1 to 100");
        } else if (a == "--print-key") {
            key_only = true;
        } else {
            return usage(("unknown argument '" + a + "'").c_str());
        }
    }
    const Hardware& hw = hardware();
    if (!backend_given) backend = backend_here(s, hw);
    const int threads = std::max(1, std::min(s.num_threads, hw.cores));
    std::vector<std::string> candidates = {blas_name.empty() ? s.fallback : blas_name};
    if (candidates[0].empty()) candidates = {"libopenblas.so.0", "libblas.so.3"};
    BlasLibrary lib;
    std::string why, opened;
    for (const std::string& name : candidates)
        if (lib.open(name, &why)) {
            opened = name;
            break;
        }
    if (opened.empty()) {
        std::fprintf(stderr, "amxblas-calibrate: no BLAS library to measure: %s: %s\n", candidates.back().c_str(), why.c_str());
        return 1;
    }
    const bool blas_threads = lib.set_threads(threads);
    const WisdomKey key = process_wisdom_key(backend, threads, lib.symbol(1));
    if (key_only) {
        print_key(key);
        return 0;
    }
    if (out.empty()) out = wisdom_file(s);
    if (out.empty()) return usage("no file to write: AMXBLAS_WISDOM=none and no --out");

    const auto start = std::chrono::steady_clock::now();
    WisdomEntry entry;
    entry.key = key;
    const CostConstants& builtin = cost_constants(backend);
    const bool runs = hw.can_run(backend);
    PhaseResult phases;
    phases.constants = builtin;
    if (runs) phases = measure_phases(backend, threads, rounds, builtin);
    entry.costs.phases = phases.constants;
    entry.costs.measured = phases.measured;
    std::printf("amxblas-calibrate: backend %s, %d threads; real BLAS %s (%s)%s\n", kernels::backend_name(backend), threads,
                key.blas.c_str(), key.blas_build.c_str(), blas_threads ? "" : " (no thread setting: as it runs)");
    std::printf("cpu: %s; %s\n", key.cpu.c_str(), key.features.c_str());
    if (!runs) std::printf("the %s backend cannot run here: its phases stay built in, only the real BLAS is measured\n",
                           kernels::backend_name(backend));
    for (const std::string& note : phases.notes) std::printf("  phases %s\n", note.c_str());
    std::printf("%-26s %12s %12s  %s\n", "constant", "measured", "built in", "");
    for (int i = 0; i < kCostFieldCount; ++i) {
        const bool measured = phases.measured >> i & 1;
        const double b = builtin.*kCostFields[i].member;
        if (!measured && b == 0) continue;
        if (measured)
            std::printf("%-26s %12.4g %12.4g  %+.0f%%\n", kCostFields[i].name, phases.constants.*kCostFields[i].member, b,
                        b > 0 ? 100 * (phases.constants.*kCostFields[i].member / b - 1) : 0.0);
        else
            std::printf("%-26s %12s %12.4g  (not measured)\n", kCostFields[i].name, "-", b);
    }
    std::printf("%-8s %10s %12s %10s %10s %10s %6s %9s\n", "real", "fixed_us", "GFLOP/s/core", "C_ns", "A_ns", "B_ns",
                "side", "worst_err");
    double blas_seconds = 0;
    for (int r = 0; r < kBlasRoutineCount; ++r) {
        const BlasRates br = measure_blas(lib, r, threads, rounds + 2);
        blas_seconds += br.seconds;
        double worst = 0;
        for (const BlasSample& x : br.samples) {
            CostInput in;
            in.precision = r % 2 ? kernels::Precision::fp64 : kernels::Precision::fp32;
            in.complex = r >= 2;
            in.m = x.m, in.n = x.n, in.k = x.k;
            in.threads = threads;
            worst = std::max(worst, std::abs(predict_cost(in, builtin, &br.model).blas_s / x.seconds - 1));
        }
        const bool usable = br.model.flops_s >= 1e3;
        std::printf("%-8s %10.3f %12.2f %10.4f %10.4f %10.4f %6d %8.0f%%%s\n", kBlasRoutineNames[r], 1e6 * br.model.fixed_s,
                    1e-9 * br.model.flops_s, 1e9 * br.model.c_s, 1e9 * br.model.a_s, 1e9 * br.model.b_s, br.side, 100 * worst,
                    usable ? "" : "  (no fit: built in)");
        if (!usable) continue;
        entry.costs.blas[r] = br.model;
        entry.costs.blas_measured[r] = true;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char measured[96];
    std::snprintf(measured, sizeof measured, "%s in %.1f s (phases %.1f s, real BLAS %.1f s)", utc_now().c_str(), seconds,
                  phases.seconds, blas_seconds);
    entry.measured = measured;

    std::string old;
    if (!read_file(out, &old, &why)) {
        std::fprintf(stderr, "amxblas-calibrate: %s cannot be read (%s): not overwritten\n", out.c_str(), why.c_str());
        return 1;
    }
    std::vector<WisdomEntry> entries;
    if (!old.empty() && !parse_wisdom(old, &entries, &why)) {
        std::fprintf(stderr, "amxblas-calibrate: %s is not a wisdom file (%s): not overwritten; remove it or give --out\n",
                     out.c_str(), why.c_str());
        return 1;
    }
    // The entry as every reader will parse it: a constant outside the parser's ranges (a fit
    // near zero whose rate passes 1e16, say) would make programs refuse the whole file, the
    // other machines' entries with it, and this tool refuse to update it.
    std::vector<WisdomEntry> readback;
    if (!parse_wisdom(format_wisdom({entry}), &readback, &why)) {
        std::fprintf(stderr, "amxblas-calibrate: the measured entry would not read back (%s): %s not written; "
                     "calibrate again\n", why.c_str(), out.c_str());
        return 1;
    }
    put_wisdom(&entries, entry);
    if (!write_file(out, format_wisdom(entries), &why)) {
        std::fprintf(stderr, "amxblas-calibrate: cannot write %s: %s\n", out.c_str(), why.c_str());
        return 1;
    }
    std::printf("measured in %.1f s; wrote the entry to %s (%zu entries)\n", seconds, out.c_str(), entries.size());
    if (s.backend == BackendChoice::automatic && backend != asked_backend(s.backend))
        std::printf("note: programs use it with AMXBLAS_BACKEND=%s (under auto the library routes only on %s)\n",
                    kernels::backend_name(backend), kernels::backend_name(asked_backend(s.backend)));
    return 0;
}

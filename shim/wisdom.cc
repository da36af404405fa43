#include "shim/wisdom.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "kernels/common/fp_environment.h"
#include "kernels/isa/backend.h"
#include "shim/config.h"
#include "shim/hardware.h"
#include "shim/log.h"
#include "shim/machine_identity.h"
#include "shim/messages.h"
#include "shim/real_blas.h"

#ifndef AMXBLAS_VERSION
#error "AMXBLAS_VERSION: the project's version, set by shim/CMakeLists.txt"
#endif

namespace amxblas {

namespace {

// A file's text, at most kWisdomMaxBytes + 1 bytes (more is refused by the parser); false with
// errno's text in *why when it cannot be read.
bool read_text(const std::string& path, std::string* text, std::string* why) {
    // Non-blocking, and a regular file only: a FIFO or device named by AMXBLAS_WISDOM must not
    // hold a BLAS call.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        *why = std::strerror(errno);
        return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        *why = "not a regular file";
        errno = EINVAL;
        return false;
    }
    text->clear();
    char buf[16384];
    while (text->size() <= kWisdomMaxBytes) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            *why = std::strerror(errno);
            ::close(fd);
            return false;
        }
        if (n == 0) break;
        text->append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return true;
}

// The file read and parsed, or why it could not be; `missing`: it does not exist.
struct ParsedFile {
    std::string path;
    bool named = false, missing = false, usable = false;
    std::vector<WisdomEntry> entries;
    std::string why;
};

// path with $HOME written ~, as a user reads it in the log's note.
std::string home_relative(const std::string& path) {
    const char* home = std::getenv("HOME");
    const std::size_t n = home ? std::strlen(home) : 0;
    if (n > 1 && path.compare(0, n, home) == 0 && path.size() > n && path[n] == '/') return "~" + path.substr(n);
    return path;
}

ParsedFile parse_file(const Settings& s) {
    ParsedFile f;
    f.path = wisdom_file(s, &f.named);
    if (f.path.empty()) return f;
    std::string text;
    if (!read_text(f.path, &text, &f.why)) {
        f.missing = errno == ENOENT || errno == ENOTDIR;
        f.why = "cannot be read (" + f.why + ")";
        return f;
    }
    // The parser's number reading is exact whatever the caller's rounding (from_chars), but
    // keep the library's own arithmetic in its own environment all the same.
    const kernels::LibraryFpEnvironment own_arithmetic;
    f.usable = parse_wisdom(text, &f.entries, &f.why);
    if (!f.usable) f.why = "is not a valid wisdom file (" + f.why + ")";
    return f;
}

CostSource source_from(const ParsedFile& f, const WisdomKey& key, kernels::Backend b, std::string* warning) {
    CostSource src;
    src.table = builtin_cost_table(b);
    src.file = f.path;
    if (f.path.empty()) {
        src.why = "AMXBLAS_WISDOM=none";
        return src;
    }
    if (!f.usable) {
        src.why = "wisdom " + f.path + " " + f.why;
        if (!f.missing || f.named) *warning = src.why;
        if (f.missing && !f.named) src.why = "no wisdom at " + home_relative(f.path);
        return src;
    }
    std::string mismatch;
    bool stale = false;
    if (const WisdomEntry* e = find_wisdom(f.entries, key, &mismatch, &stale)) {
        src.table = apply_wisdom(src.table, *e);
        src.entry = e->measured.empty() ? "an entry" : "the entry measured " + e->measured;
        return src;
    }
    src.why = "wisdom " + f.path + " has no entry for this process: " + mismatch + " (this process: " + key.cpu +
              "; backend " + key.backend + ", " + std::to_string(key.threads) + " threads; BLAS " + key.blas + ")";
    // Stale or foreign: worth a warning. Entries for this machine and BLAS under other settings
    // (a backend or thread count not calibrated) are not: the log's note says so.
    if (stale) *warning = src.why;
    return src;
}

constexpr const char* kCalibrateHint = "amxblas-run --calibrate measures them";

// The log's note on the constants in use, set with the first table (process_cost_table).
std::string& g_note = *new std::string;  // never destroyed: calls may outlive exit()
std::atomic<bool> g_note_ready{false};

}  // namespace

std::string wisdom_file(const Settings& s, bool* named) {
    if (named) *named = !s.wisdom.empty() && s.wisdom != "none";
    if (s.wisdom == "none") return "";
    if (!s.wisdom.empty()) return s.wisdom;
    // XDG Base Directory: a relative XDG_DATA_HOME is invalid and ignored.
    const char* data = std::getenv("XDG_DATA_HOME");
    if (data && data[0] == '/') return std::string(data) + "/amxblas/wisdom";
    const char* home = std::getenv("HOME");
    if (home && home[0] == '/') return std::string(home) + "/.local/share/amxblas/wisdom";
    return "";
}

WisdomKey process_wisdom_key(kernels::Backend b, int threads, const void* blas_symbol) {
    WisdomKey k;
    k.cpu = cpu_description();
    k.features = cpu_feature_list();
    k.backend = kernels::backend_name(b);
    k.threads = threads;
    const LibraryIdentity lib = identify_library(blas_symbol);
    k.blas = lib.path.empty() ? "unknown" : lib.path;
    k.blas_build = lib.build.empty() ? "unknown" : lib.build;
    k.library = std::string("amxblas ") + AMXBLAS_VERSION + " model " + std::to_string(kCostModelVersion);
    return k;
}

CostSource find_cost_source(const Settings& s, kernels::Backend b, int threads, const void* blas_symbol, bool warn) {
    std::string warning;
    CostSource src = source_from(parse_file(s), process_wisdom_key(b, threads, blas_symbol), b, &warning);
    if (warn && !warning.empty()) warning_message(("warning: " + warning + "; using the built-in constants").c_str());
    return src;
}

const CostTable& process_cost_table(Routine r) {
    static CostTable tables[kRoutineCount];
    static std::atomic<bool> ready[kRoutineCount];
    static std::once_flag once[kRoutineCount];
    const int i = static_cast<int>(r);
    if (ready[i].load(std::memory_order_acquire)) return tables[i];
    std::call_once(once[i], [i, r] {
        const Settings& s = settings();
        // The file once per process, and its warning and note at most once.
        static const ParsedFile& file = *new ParsedFile(parse_file(s));  // never destroyed: calls may outlive exit()
        static std::once_flag told;
        const kernels::Backend b = asked_backend(s.backend);
        const int threads = std::max(1, std::min(s.num_threads, hardware().cores));
        std::string warning;
        const CostSource src = source_from(file, process_wisdom_key(b, threads, real_symbol(r)), b, &warning);
        tables[i] = src.table;
        ready[i].store(true, std::memory_order_release);
        std::call_once(told, [&] {
            if (!warning.empty())
                warning_message(("warning: " + warning + "; using the built-in constants (amxblas-run --calibrate --blas " +
                                 process_wisdom_key(b, threads, real_symbol(r)).blas + " measures them)")
                                    .c_str());
            g_note = src.entry.empty() ? "note: cost model: the built-in constants (" + src.why + "); " + kCalibrateHint
                                       : "note: cost model: the constants measured in wisdom " + src.file + ", " +
                                             src.entry + " (backend " + kernels::backend_name(b) + ", " +
                                             std::to_string(threads) + " threads)";
            g_note_ready.store(true, std::memory_order_release);
        });
    });
    return tables[i];
}

void log_cost_model_note_once() {
    static std::once_flag once;
    if (!g_note_ready.load(std::memory_order_acquire)) return;
    std::call_once(once, [] { log_note(g_note.c_str()); });
}

}  // namespace amxblas

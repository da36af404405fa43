#include "shim/log.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "shim/config.h"

namespace amxblas {

namespace {

// One write(2) of the whole buffer (a short write of a line to a pipe is retried).
void write_all(int fd, const char* buf, size_t len) {
    while (len > 0) {
        const ssize_t w = ::write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        buf += w;
        len -= static_cast<size_t>(w);
    }
}

void write_line_to(int fd, const char* prefix, const char* text) {
    char line[1024];
    const int n = std::snprintf(line, sizeof line, "amxblas: %s%s\n", prefix, text);
    if (n > 0) write_all(fd, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
}

const char* rank_from_environment() {
    for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
        if (const char* v = std::getenv(var); v && *v) return v;
    return "0";
}

// The log's file descriptor, opened once on first use.
int log_fd() {
    static const int fd = [] {
        const std::string& pattern = settings().log_path;
        if (pattern.empty()) return STDERR_FILENO;
        char path[4096];
        expand_log_path(pattern.c_str(), path, sizeof path);
        const int f = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (f < 0) {
            const std::string msg = std::string("warning: AMXBLAS_LOG=") + pattern +
                                    ": cannot open " + path + " (" + std::strerror(errno) +
                                    "); logging to stderr";
            warning_message(msg.c_str());
            return STDERR_FILENO;
        }
        return f;
    }();
    return fd;
}

// The work the call asked for in real flops, 2mnk (8mnk for a complex routine: four real
// products per complex one); 0 for an invalid call with a negative size.
double call_flops(Routine r, std::int64_t m, std::int64_t n, std::int64_t k) {
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    return (routine_is_complex(r) ? 8.0 : 2.0) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
}

double gflops(Routine r, std::int64_t m, std::int64_t n, std::int64_t k, double seconds) {
    return seconds > 0 ? call_flops(r, m, n, k) / seconds * 1e-9 : 0;
}

// --- Summary: calls, time and flops per (routine, route, forward reason). -----------------
// Plain arrays and a statically initialised mutex: nothing here has a destructor, so the
// summary can run from atexit whatever the order of static destruction.
struct SummaryRow {
    Routine routine;
    Route route;
    const char* reason;  // a static string
    long calls;
    double seconds;
    double flops;
};
constexpr int kMaxSummaryRows = 128;
SummaryRow g_rows[kMaxSummaryRows];
int g_row_count = 0;
pthread_mutex_t g_rows_lock = PTHREAD_MUTEX_INITIALIZER;

void print_summary() {
    pthread_mutex_lock(&g_rows_lock);
    long calls = 0, forwarded = 0, scaled = 0;
    for (int i = 0; i < g_row_count; ++i) {
        calls += g_rows[i].calls;
        if (g_rows[i].route == Route::forward) forwarded += g_rows[i].calls;
        if (g_rows[i].route == Route::beta_scale) scaled += g_rows[i].calls;
    }
    char line[512];
    int n = std::snprintf(line, sizeof line, "amxblas: summary pid=%ld calls=%ld routed=%ld "
                          "scaled=%ld forwarded=%ld\n", static_cast<long>(getpid()), calls,
                          calls - forwarded - scaled, scaled, forwarded);
    write_all(log_fd(), line, n);
    for (int i = 0; i < g_row_count; ++i) {
        const SummaryRow& r = g_rows[i];
        n = std::snprintf(line, sizeof line,
                          "amxblas: summary routine=%s route=%s%s%s calls=%ld time_s=%.6f "
                          "gflops=%.2f\n",
                          routine_name(r.routine), route_name(r.route),
                          r.reason ? " reason=" : "", r.reason ? r.reason : "", r.calls,
                          r.seconds, r.seconds > 0 ? r.flops / r.seconds * 1e-9 : 0.0);
        write_all(log_fd(), line, n);
    }
    pthread_mutex_unlock(&g_rows_lock);
}

void add_to_summary(const CallRecord& rec) {
    static const bool registered = [] { return std::atexit(print_summary) == 0; }();
    (void)registered;
    const double flops = call_flops(rec.routine, rec.m, rec.n, rec.k);
    pthread_mutex_lock(&g_rows_lock);
    int i = 0;
    // Reasons are compared by text: the kernels and the policy each have their literals.
    auto same_reason = [](const char* a, const char* b) {
        return a == b || (a && b && std::strcmp(a, b) == 0);
    };
    while (i < g_row_count && !(g_rows[i].routine == rec.routine && g_rows[i].route == rec.route &&
                                same_reason(g_rows[i].reason, rec.reason)))
        ++i;
    if (i == g_row_count && g_row_count < kMaxSummaryRows)
        g_rows[g_row_count++] = SummaryRow{rec.routine, rec.route, rec.reason, 0, 0, 0};
    if (i < g_row_count) {
        g_rows[i].calls += 1;
        g_rows[i].seconds += rec.seconds;
        g_rows[i].flops += flops;
    }
    pthread_mutex_unlock(&g_rows_lock);
}

}  // namespace

void expand_log_path(const char* pattern, char* out, int size) {
    int o = 0;
    auto put = [&](const char* s) {
        while (*s && o < size - 1) out[o++] = *s++;
    };
    for (const char* p = pattern; *p && o < size - 1; ++p) {
        if (p[0] == '%' && p[1] == 'p') {
            char pid[32];
            std::snprintf(pid, sizeof pid, "%ld", static_cast<long>(getpid()));
            put(pid);
            ++p;
        } else if (p[0] == '%' && p[1] == 'r') {
            put(rank_from_environment());
            ++p;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

int format_call_line(const CallRecord& r, char* buf, int size) {
    int n = std::snprintf(buf, size,
                          "amxblas: routine=%s layout=%s transa=%c transb=%c m=%lld n=%lld k=%lld "
                          "lda=%lld ldb=%lld ldc=%lld route=%s",
                          routine_name(r.routine), r.layout, r.transa, r.transb,
                          static_cast<long long>(r.m), static_cast<long long>(r.n),
                          static_cast<long long>(r.k), static_cast<long long>(r.lda),
                          static_cast<long long>(r.ldb), static_cast<long long>(r.ldc),
                          route_name(r.route));
    auto append = [&](const char* fmt, auto... args) {
        if (n >= 0 && n < size) n += std::snprintf(buf + n, size - n, fmt, args...);
    };
    if (r.route == Route::forward || r.route == Route::beta_scale) {
        append(" reason=%s", r.reason ? r.reason : "unknown");
    } else {
        append(" backend=%s threads=%d", r.backend, r.threads);
        if (r.note) append(" note=%s", r.note);
    }
    append(" time_us=%.1f gflops=%.2f", r.seconds * 1e6, gflops(r.routine, r.m, r.n, r.k, r.seconds));
    return n < size ? n : size - 1;
}

void log_call(const CallRecord& rec) {
    const int verbose = settings().verbose;
    if (verbose >= 2) {
        char line[640];
        int n = format_call_line(rec, line, sizeof line - 1);
        line[n++] = '\n';
        write_all(log_fd(), line, static_cast<size_t>(n));
    }
    if (verbose >= 1) add_to_summary(rec);
}

void log_note(const char* text) {
    if (settings().verbose >= 1) write_line_to(log_fd(), "", text);
}

void warning_message(const char* text) { write_line_to(STDERR_FILENO, "", text); }

void fatal_message(const char* text) { write_line_to(STDERR_FILENO, "error: ", text); }

}  // namespace amxblas

#include "shim/log.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "kernels/common/fp_environment.h"
#include "shim/config.h"
#include "shim/messages.h"
#include "shim/summary_signals.h"

namespace amxblas {

namespace {

const char* rank_from_environment() {
    for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
        if (const char* v = std::getenv(var); v && *v) return v;
    return "0";
}

// The log's file descriptor, opened on first use (-1: not yet). A forked child whose
// AMXBLAS_LOG has %p opens its own file (log_after_fork).
//
// The program owns the descriptor table: it may close the log's descriptor (a daemon's
// close-all loop, a careless close(3)) and get the same number for a file of its own. So the
// log remembers the device and inode of the file it opened and checks them with fstat(2)
// before each write (one system call next to the write itself, and async-signal-safe, so the
// summary's signal handler can do it too): when the descriptor is no longer the log's, the log
// opens its file again (O_APPEND, so nothing is overwritten) on a new descriptor and never
// writes to, or closes, the old number. A descriptor closed and reused by another thread
// between the check and the write is not caught; closing a descriptor another thread may use
// is already a bug of the program's. Chosen over opening the file for every line (two more
// system calls per line, and no cheaper way exists to hold a descriptor the program cannot
// close); the check needs no lock on the writers' path.
std::atomic<int> g_log_fd{-1};
std::atomic<unsigned long> g_log_dev{0}, g_log_ino{0};
char g_log_path[4096];  // the expanded AMXBLAS_LOG; "" when the log is stderr
pthread_mutex_t g_log_fd_lock = PTHREAD_MUTEX_INITIALIZER;

bool owns(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == g_log_dev.load(std::memory_order_relaxed) &&
           st.st_ino == g_log_ino.load(std::memory_order_relaxed);
}

// Opens g_log_path for appending and records its identity; -1 if it cannot be opened.
int open_log_path() {
    const int f = ::open(g_log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat st;
    if (f < 0 || fstat(f, &st) != 0) return f < 0 ? -1 : (::close(f), -1);
    g_log_dev.store(st.st_dev, std::memory_order_relaxed);
    g_log_ino.store(st.st_ino, std::memory_order_relaxed);
    return f;
}

int open_log() {
    const std::string& pattern = settings().log_path;
    g_log_path[0] = '\0';
    if (pattern.empty()) return STDERR_FILENO;
    // A path cut to fit would name another file: refused instead (PATH_MAX is 4,096 with the NUL).
    const int length = expand_log_path(pattern.c_str(), g_log_path, sizeof g_log_path);
    if (length >= static_cast<int>(sizeof g_log_path)) {
        g_log_path[0] = '\0';
        const std::string msg = "warning: AMXBLAS_LOG is longer than a path may be (" + std::to_string(length) +
                                " characters once expanded, at most " + std::to_string(sizeof g_log_path - 1) +
                                "): no log file is written; logging to stderr";
        warning_message(msg.c_str());
        return STDERR_FILENO;
    }
    const int f = open_log_path();
    if (f < 0) {
        const std::string msg = std::string("warning: AMXBLAS_LOG=") + pattern + ": cannot open " + g_log_path +
                                " (" + std::strerror(errno) + "); logging to stderr";
        g_log_path[0] = '\0';
        warning_message(msg.c_str());
        return STDERR_FILENO;
    }
    return f;
}

// The log's descriptor for a write from normal (not signal) context: opened on first use, and
// opened again when the program has taken the old one (see above).
int log_fd() {
    int fd = g_log_fd.load(std::memory_order_acquire);
    if (fd == STDERR_FILENO || (fd >= 0 && owns(fd))) return fd;
    pthread_mutex_lock(&g_log_fd_lock);
    fd = g_log_fd.load(std::memory_order_relaxed);
    if (fd < 0) {
        fd = open_log();
    } else if (fd != STDERR_FILENO && !owns(fd)) {
        fd = open_log_path();
        if (fd < 0) fd = STDERR_FILENO;  // the file went away: stderr, as when it cannot be opened
    }
    g_log_fd.store(fd, std::memory_order_release);
    pthread_mutex_unlock(&g_log_fd_lock);
    return fd;
}

// The same for the summary, which may be written from a signal handler: no lock, nothing
// stored; a descriptor opened here is returned in *opened for the caller to close.
int summary_fd(int* opened) {
    *opened = -1;
    const int fd = g_log_fd.load(std::memory_order_acquire);
    if (fd < 0 || fd == STDERR_FILENO || owns(fd)) return fd < 0 ? STDERR_FILENO : fd;
    if (g_log_path[0]) *opened = ::open(g_log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return *opened >= 0 ? *opened : STDERR_FILENO;
}

// The work the call asked for in real flops, 2mnk (8mnk for a complex routine: four real
// products per complex one); 0 for an invalid call with a negative size, and for beta-scale
// (K = 0 or ALPHA = 0), which forms no product: C := BETA*C is no GEMM work to rate.
double call_flops(const CallRecord& rec) {
    const Routine r = rec.routine;
    const std::int64_t m = rec.m, n = rec.n, k = rec.k;
    if (rec.route == Route::beta_scale || m <= 0 || n <= 0 || k <= 0) return 0;
    return (routine_is_complex(r) ? 8.0 : 2.0) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
}

double gflops(const CallRecord& rec) {
    return rec.seconds > 0 ? call_flops(rec) / rec.seconds * 1e-9 : 0;
}

// --- Summary: calls, time and flops per (routine, route, forward reason). -----------------
// Plain arrays and a statically initialised mutex: nothing here has a destructor, so the
// summary can run from atexit whatever the order of static destruction. It is also written
// from a signal handler, so it is formatted without stdio or locks (async-signal-safe): a row
// is complete before g_row_count counts it, and a call that races with the signal may be
// missing from the counts.
struct SummaryRow {
    Routine routine;
    Route route;
    int moduli;          // route fp64-int8: the INT8 engine's count (rows per count); else 0
    const char* reason;  // a static string
    long calls;
    double seconds;
    double flops;
    long mispredicted;   // calls more than kMispredictedFactor off their prediction
};
// The rows a process may need are few (its routines x the routes and reasons they took), but
// their bound (every routine x every route x every reason) is far larger than a fixed table
// should be. So a call whose row does not fit is counted in a row routine=other of its route
// (without its reason, and for fp64-int8 without its count), and the summary says so in a
// note: the totals always equal the calls made, and routed, scaled and forwarded calls stay
// apart.
constexpr int kMaxSummaryRows = 128;
SummaryRow g_rows[kMaxSummaryRows];
std::atomic<int> g_row_count{0};
SummaryRow g_other[kRouteCount];  // per route, the calls no row had room for
pthread_mutex_t g_rows_lock = PTHREAD_MUTEX_INITIALIZER;
// Calls counted in the rows, and how many of them the last written summary covered: a summary
// is written only when it has something new, so a process writes it once (at exit, at a
// terminating signal or every AMXBLAS_SUMMARY_EVERY seconds), each one cumulative.
std::atomic<long> g_calls_counted{0};
std::atomic<long> g_calls_summarised{0};
std::atomic<int> g_summary_busy{0};
std::atomic<long> g_last_summary_ns{0};
// A call has started in this process (it may still be running: a signal during the process's
// first call still gets a summary, calls=0), and no summary has been written yet.
std::atomic<bool> g_call_started{false};
std::atomic<bool> g_summary_written{false};
// The process the counts belong to: a vfork() child shares them, and must not write them.
std::atomic<long> g_summary_pid{0};

// Appends text to a fixed buffer, truncating; async-signal-safe.
struct Text {
    char* p;
    char* end;
    void str(const char* s) {
        while (*s && p < end) *p++ = *s++;
    }
    void num(unsigned long long v) {
        char d[24];
        int n = 0;
        do d[n++] = char('0' + v % 10); while ((v /= 10) != 0);
        while (n > 0 && p < end) *p++ = d[--n];
    }
    // v >= 0 with `decimals` digits after the point, rounded half up (as %.Nf for these values).
    void fixed(double v, int decimals) {
        unsigned long long scale = 1;
        for (int i = 0; i < decimals; ++i) scale *= 10;
        if (!(v >= 0) || v > 1e12) v = v > 1e12 ? 1e12 : 0;
        const unsigned long long x = static_cast<unsigned long long>(v * double(scale) + 0.5);
        num(x / scale);
        str(".");
        const unsigned long long frac = x % scale;
        for (unsigned long long q = scale / 10; q > 0; q /= 10) {
            if (p < end) *p++ = char('0' + frac / q % 10);
        }
    }
};

constexpr std::size_t kSummaryBytes = 512 + (kMaxSummaryRows + kRouteCount) * 192;
char g_summary_text[kSummaryBytes];

// The whole summary in one buffer, written with one write(2); async-signal-safe.
void write_summary() {
    const long counted = g_calls_counted.load(std::memory_order_acquire);
    if (counted <= g_calls_summarised.load(std::memory_order_relaxed) &&
        (g_summary_written.load(std::memory_order_relaxed) || !g_call_started.load(std::memory_order_relaxed)))
        return;
    if (g_summary_busy.exchange(1)) return;  // another thread is writing it right now
    const int rows = g_row_count.load(std::memory_order_acquire);
    long calls = 0, forwarded = 0, scaled = 0;
    for (int i = 0; i < rows; ++i) {
        calls += g_rows[i].calls;
        if (g_rows[i].route == Route::forward) forwarded += g_rows[i].calls;
        if (g_rows[i].route == Route::beta_scale) scaled += g_rows[i].calls;
    }
    long other_calls = 0;
    for (const SummaryRow& r : g_other) {
        other_calls += r.calls;
        if (r.route == Route::forward) forwarded += r.calls;
        if (r.route == Route::beta_scale) scaled += r.calls;
    }
    calls += other_calls;
    Text t{g_summary_text, g_summary_text + kSummaryBytes - 1};
    t.str("amxblas: summary pid=");
    t.num(static_cast<unsigned long long>(getpid()));
    t.str(" calls=");
    t.num(calls);
    t.str(" routed=");
    t.num(calls - forwarded - scaled);
    t.str(" scaled=");
    t.num(scaled);
    t.str(" forwarded=");
    t.num(forwarded);
    t.str("\n");
    for (int i = 0; i < rows + kRouteCount; ++i) {
        const bool other = i >= rows;
        const SummaryRow& r = other ? g_other[i - rows] : g_rows[i];
        if (other && r.calls == 0) continue;
        t.str("amxblas: summary routine=");
        t.str(other ? "other" : routine_name(r.routine));
        t.str(" route=");
        t.str(route_name(r.route));
        if (r.moduli > 0 && !other) {
            t.str(" products=");
            t.num(static_cast<unsigned long long>(r.moduli));
        }
        if (r.reason && !other) {
            t.str(" reason=");
            t.str(r.reason);
        }
        t.str(" calls=");
        t.num(r.calls);
        t.str(" time_s=");
        t.fixed(r.seconds, 6);
        t.str(" gflops=");
        t.fixed(r.seconds > 0 ? r.flops / r.seconds * 1e-9 : 0.0, 2);
        if (r.mispredicted > 0) {
            t.str(" mispredicted=");
            t.num(static_cast<unsigned long long>(r.mispredicted));
        }
        t.str("\n");
    }
    if (other_calls > 0) {
        t.str("amxblas: note: the summary has ");
        t.num(kMaxSummaryRows);
        t.str(" rows of (routine, route, reason); ");
        t.num(static_cast<unsigned long long>(other_calls));
        t.str(" calls of further combinations are counted in the rows routine=other\n");
    }
    int opened;
    write_all(summary_fd(&opened), g_summary_text, static_cast<size_t>(t.p - g_summary_text));
    if (opened >= 0) ::close(opened);
    g_calls_summarised.store(counted, std::memory_order_relaxed);
    g_summary_written.store(true, std::memory_order_relaxed);
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    g_last_summary_ns.store(now.tv_sec * 1000000000L + now.tv_nsec, std::memory_order_relaxed);
    g_summary_busy.store(0);
}

void print_summary() { write_summary_now(); }

// At the start of the first call: the log is opened then, so that the handlers never open it,
// and the signal handlers are in place for as long as any call runs.
void start_summary() {
    g_summary_pid.store(getpid(), std::memory_order_relaxed);
    log_fd();
    std::atexit(print_summary);
    install_summary_signal_handlers(write_summary_now);
}

void add_to_summary(const CallRecord& rec) {
    log_call_started();
    const double flops = call_flops(rec);
    pthread_mutex_lock(&g_rows_lock);
    int i = 0;
    const int count = g_row_count.load(std::memory_order_relaxed);
    // Reasons are compared by text as well as by address (every reason is a constant of
    // kernels/common/reasons.def, so the address alone would do; the text costs nothing here).
    auto same_reason = [](const char* a, const char* b) {
        return a == b || (a && b && std::strcmp(a, b) == 0);
    };
    // BF16's routes name their product count; INT8's one route is split by its moduli here.
    const int moduli = route_carries_count(rec.route) ? 0 : rec.fp64_products;
    while (i < count && !(g_rows[i].routine == rec.routine && g_rows[i].route == rec.route &&
                          g_rows[i].moduli == moduli && same_reason(g_rows[i].reason, rec.reason)))
        ++i;
    if (i == count && count < kMaxSummaryRows) {
        g_rows[count] = SummaryRow{rec.routine, rec.route, moduli, rec.reason, 0, 0, 0, 0};
        g_row_count.store(count + 1, std::memory_order_release);
    }
    SummaryRow& row = i < kMaxSummaryRows ? g_rows[i] : g_other[static_cast<int>(rec.route)];
    row.route = rec.route;
    row.calls += 1;
    row.seconds += rec.seconds;
    row.flops += flops;
    if (misprediction(rec) > 0) row.mispredicted += 1;
    g_calls_counted.fetch_add(1, std::memory_order_release);
    pthread_mutex_unlock(&g_rows_lock);

    const int every = settings().summary_every_s;
    if (every > 0) {
        timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long now_ns = now.tv_sec * 1000000000L + now.tv_nsec;
        long last = g_last_summary_ns.load(std::memory_order_relaxed);
        if (last == 0 && g_last_summary_ns.compare_exchange_strong(last, now_ns)) last = now_ns;
        if (now_ns - last >= every * 1000000000L) write_summary();
    }
}

}  // namespace

int expand_log_path(const char* pattern, char* out, int size) {
    int o = 0, length = 0;
    auto put = [&](const char* s) {
        for (; *s; ++s, ++length)
            if (o < size - 1) out[o++] = *s;
    };
    for (const char* p = pattern; *p; ++p) {
        if (p[0] == '%' && p[1] == 'p') {
            char pid[32];
            std::snprintf(pid, sizeof pid, "%ld", static_cast<long>(getpid()));
            put(pid);
            ++p;
        } else if (p[0] == '%' && p[1] == 'r') {
            put(rank_from_environment());
            ++p;
        } else {
            const char c[2] = {*p, '\0'};
            put(c);
        }
    }
    out[o] = '\0';
    return length;
}

double misprediction(const CallRecord& r) {
    if (!(r.predicted_s > 0) || !(r.seconds > 0)) return 0;
    const double ratio = r.seconds / r.predicted_s;
    return ratio > kMispredictedFactor || ratio * kMispredictedFactor < 1 ? ratio : 0;
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
        if (route_is_fp64(r.route)) {
            const bool own = route_carries_count(r.route);
            append(" engine=%s products=%d", kernels::fp64_engine_name(route_engine(r.route)),
                   own ? route_products(r.route) : r.fp64_products);
        }
        if (r.fp64_auto) append(" margin=%.3g repaired=%ld", r.fp64_margin, r.fp64_repaired);
    }
    if (r.predicted_speedup > 0) append(" predicted=%.2fx", r.predicted_speedup);
    if (const double ratio = misprediction(r); ratio > 0) append(" mispredicted=%.3gx", ratio);
    append(" time_us=%.1f gflops=%.2f", r.seconds * 1e6, gflops(r));
    return n < size ? n : size - 1;
}

void log_call_started() {
    if (g_call_started.load(std::memory_order_relaxed) || settings().verbose < 1) return;
    // std::call_once, not a static's guard: glibc's pthread_once lets a child forked while
    // another thread was inside start_summary() run it again instead of waiting for a thread
    // it does not have (shim/after_fork.cc).
    static std::once_flag started;
    std::call_once(started, start_summary);
    g_call_started.store(true, std::memory_order_relaxed);
}

void write_summary_now() {
    // At exit or on a signal, in whatever environment the program left: the rates' arithmetic
    // must not trap nor leave a flag (the LDMXCSR pair is async-signal-safe).
    const kernels::LibraryFpEnvironment own_arithmetic;
    if (g_summary_pid.load(std::memory_order_relaxed) == getpid()) write_summary();
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
    if (settings().verbose < 1) return;
    char line[1024];
    const int n = std::snprintf(line, sizeof line, "amxblas: %s\n", text);
    if (n > 0) write_all(log_fd(), line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
}

void log_after_fork() {
    g_rows_lock = PTHREAD_MUTEX_INITIALIZER;
    g_log_fd_lock = PTHREAD_MUTEX_INITIALIZER;
    g_row_count.store(0);
    for (SummaryRow& r : g_other) r = SummaryRow{};
    g_calls_counted.store(0);
    g_calls_summarised.store(0);
    g_summary_busy.store(0);
    g_last_summary_ns.store(0);
    g_call_started.store(false);
    g_summary_written.store(false);
    g_summary_pid.store(getpid());
    const int fd = g_log_fd.load();
    if (fd > STDERR_FILENO && std::strstr(settings().log_path.c_str(), "%p")) {
        if (owns(fd)) ::close(fd);  // a number the program has taken stays the program's
        g_log_fd.store(-1);
    }
}
}  // namespace amxblas

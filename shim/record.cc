#include "shim/record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "kernels/common/fp_environment.h"
#include "shim/config.h"
#include "shim/log.h"
#include "shim/messages.h"

namespace amxblas {

namespace {

// The .gemm file's routine name and the digits of its header's scalars per scalar type: enough
// to read back the same value (9 for float, 17 for double), so a recorded call replays with the
// caller's very ALPHA and BETA.
template <typename T>
struct Format {
    static constexpr bool single = std::is_same_v<T, float> || std::is_same_v<T, cfloat>;
    static constexpr bool complex = std::is_same_v<T, cfloat> || std::is_same_v<T, cdouble>;
    static constexpr const char* name = single ? (complex ? "cgemm" : "sgemm") : (complex ? "zgemm" : "dgemm");
    static constexpr int digits = single ? 9 : 17;
};

template <typename T>
double re(T x) {
    if constexpr (is_complex_v<T>) return x.real();
    else return x;
}
template <typename T>
double im(T x) {
    if constexpr (is_complex_v<T>) return x.imag();
    else return 0;
}

// Per process: the counter that names files, the bytes written (against
// AMXBLAS_RECORD_MAX_MB) and whether the recording has stopped. A stopped recording warned
// once; the flags are separate so that the warning is written once however many threads stop.
std::atomic<unsigned long> g_next_file{0};
std::atomic<std::size_t> g_bytes{0};
std::atomic<bool> g_stopped{false};
std::atomic<bool> g_warned{false};

// To the log when logging is on (it is where the user looks), else to stderr: a user who set
// AMXBLAS_RECORD expects files, and must hear why none come.
void stop_recording(const std::string& why) {
    g_stopped.store(true, std::memory_order_relaxed);
    if (g_warned.exchange(true)) return;
    const std::string text = "warning: " + why;
    if (settings().verbose >= 1) log_note(text.c_str());
    else warning_message(text.c_str());
}

// Takes `bytes` from the process's allowance; false (and nothing taken) when they do not fit.
bool reserve(std::size_t bytes, std::size_t cap) {
    std::size_t used = g_bytes.load(std::memory_order_relaxed);
    do {
        if (bytes > cap - used) return false;
    } while (!g_bytes.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return true;
}

// Buffered writes to one descriptor: the operands are copied column by column (compacting
// them) into a buffer that is written with write(2) whenever it is full.
class FileWriter {
public:
    explicit FileWriter(int fd) : fd_(fd), buf_(new (std::nothrow) char[kSize]) {
        ok_ = buf_ != nullptr;
        if (!ok_) errno = ENOMEM;
    }
    void put(const void* data, std::size_t bytes) { copy(static_cast<const char*>(data), bytes); }
    void zeros(std::size_t bytes) { copy(nullptr, bytes); }
    bool finish() {
        flush();
        return ok_;
    }

private:
    static constexpr std::size_t kSize = std::size_t{1} << 18;

    void copy(const char* src, std::size_t bytes) {
        while (ok_ && bytes > 0) {
            const std::size_t n = std::min(bytes, kSize - used_);
            if (src) {
                std::memcpy(buf_.get() + used_, src, n);
                src += n;
            } else {
                std::memset(buf_.get() + used_, 0, n);
            }
            used_ += n;
            bytes -= n;
            if (used_ == kSize) flush();
        }
    }
    void flush() {
        if (ok_ && used_ > 0) ok_ = write_all(fd_, buf_.get(), used_);
        used_ = 0;
    }

    int fd_;
    std::unique_ptr<char[]> buf_;
    std::size_t used_ = 0;
    bool ok_ = false;
};

// One stored operand: `rows` x `cols` of x with leading dimension ld, written with the tight
// leading dimension max(1, rows) (a BLAS leading dimension is at least 1, so an operand without
// rows still takes one zero per column). zero: write zeros and read nothing, for A and B of a
// call the BLAS does not read them in (ALPHA = 0 or K = 0: a program may pass placeholders).
template <typename T>
void put_operand(FileWriter& w, const T* x, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                 bool zero) {
    const std::size_t tight = static_cast<std::size_t>(std::max<std::int64_t>(rows, 1));
    for (std::int64_t j = 0; j < cols; ++j) {
        if (zero || rows == 0) w.zeros(tight * sizeof(T));
        else w.put(x + j * ld, tight * sizeof(T));
    }
}

template <typename T>
void write_file(const kernels::GemmArgs<T>& g) {
    const Settings& s = settings();
    const char ta = static_cast<char>(g.transa & ~0x20), tb = static_cast<char>(g.transb & ~0x20);
    const std::int64_t m = g.m, n = g.n, k = g.k;
    // Stored A is M x K for N, else K x M; stored B is K x N for N, else N x K.
    const std::int64_t a_rows = ta == 'N' ? m : k, a_cols = ta == 'N' ? k : m;
    const std::int64_t b_rows = tb == 'N' ? k : n, b_cols = tb == 'N' ? n : k;
    const std::int64_t lda = std::max<std::int64_t>(a_rows, 1), ldb = std::max<std::int64_t>(b_rows, 1);
    const bool unread = g.alpha == T(0) || k == 0;

    char header[256];
    const int d = Format<T>::digits;
    const int hlen = std::snprintf(header, sizeof header,
                                   "%s %c %c %lld %lld %lld %.*g %.*g %lld %lld %.*g %.*g %lld\n",
                                   Format<T>::name, ta, tb, static_cast<long long>(m),
                                   static_cast<long long>(n), static_cast<long long>(k), d,
                                   re(g.alpha), d, im(g.alpha), static_cast<long long>(lda),
                                   static_cast<long long>(ldb), d, re(g.beta), d, im(g.beta),
                                   static_cast<long long>(m));
    if (hlen <= 0 || hlen >= static_cast<int>(sizeof header)) return;
    // In 128 bits: sizes up to 2^31 - 1 make operands of up to 2^66 bytes, past size_t.
    const unsigned __int128 wide = static_cast<unsigned __int128>(hlen) +
                                   (static_cast<unsigned __int128>(lda * a_cols) +
                                    static_cast<unsigned __int128>(ldb * b_cols) +
                                    static_cast<unsigned __int128>(m * n)) * sizeof(T);
    const std::size_t bytes = wide > s.record_max_bytes ? s.record_max_bytes + 1 : static_cast<std::size_t>(wide);
    if (!reserve(bytes, s.record_max_bytes)) {
        stop_recording("AMXBLAS_RECORD_MAX_MB=" + std::to_string(s.record_max_bytes >> 20) +
                       " reached: this process wrote " + std::to_string(g_bytes.load()) +
                       " bytes to " + s.record_dir + " and records no more calls");
        return;
    }

    // <routine><TRANSA><TRANSB><M>x<N>x<K>.<pid>.<counter>.gemm, created exclusively: a name
    // taken already (by an earlier process with the same pid) moves on to the next counter, so
    // no file is ever overwritten.
    char name[160];
    std::string path;
    int fd = -1;
    for (int attempt = 0; attempt < 1000 && fd < 0; ++attempt) {
        std::snprintf(name, sizeof name, "/%s%c%c%lldx%lldx%lld.%ld.%lu.gemm", Format<T>::name, ta, tb,
                      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                      static_cast<long>(getpid()), g_next_file.fetch_add(1, std::memory_order_relaxed));
        path = s.record_dir + name;
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        stop_recording("AMXBLAS_RECORD=" + s.record_dir + ": cannot create " + path + " (" +
                       std::strerror(errno) + "); recording stops");
        return;
    }
    FileWriter w(fd);
    w.put(header, static_cast<std::size_t>(hlen));
    put_operand(w, g.a, g.lda, a_rows, a_cols, unread);
    put_operand(w, g.b, g.ldb, b_rows, b_cols, unread);
    put_operand(w, g.c, g.ldc, m, n, false);
    const bool ok = w.finish();
    const int error = errno;
    ::close(fd);
    if (!ok) {
        ::unlink(path.c_str());  // an incomplete file would only be a malformed one
        stop_recording("AMXBLAS_RECORD=" + s.record_dir + ": cannot write " + path + " (" +
                       std::strerror(error) + "); recording stops");
    }
}

template <typename T>
void record(const kernels::GemmArgs<T>& args) {
    if (g_stopped.load(std::memory_order_relaxed)) return;
    // ALPHA and BETA are printed to the digit (glibc's printf rounds in the current mode).
    const kernels::LibraryFpEnvironment own_arithmetic;
    try {
        write_file(args);
    } catch (...) {
        // Only std::string's allocations can throw here; the recording stops without a word
        // rather than risk more allocations, and the call goes on.
        g_stopped.store(true, std::memory_order_relaxed);
    }
}

}  // namespace

void record_call(const kernels::GemmArgs<float>& args) { record(args); }
void record_call(const kernels::GemmArgs<double>& args) { record(args); }
void record_call(const kernels::GemmArgs<cfloat>& args) { record(args); }
void record_call(const kernels::GemmArgs<cdouble>& args) { record(args); }

void record_after_fork() {
    g_bytes.store(0, std::memory_order_relaxed);
    g_stopped.store(false, std::memory_order_relaxed);
    g_warned.store(false, std::memory_order_relaxed);
}

}  // namespace amxblas

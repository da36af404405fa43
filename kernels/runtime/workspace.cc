// The workspace pool (workspace.h says what it keeps and why).
#include "kernels/runtime/workspace.h"
#include "kernels/common/reasons.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <mutex>

namespace amxblas::kernels {
namespace {

constexpr std::size_t kAlign = 64;
// Workspaces of 1 MiB and more are 2 MiB aligned, a multiple of 2 MiB long and advised as
// transparent huge pages (a hint: where THP is off nothing changes), so their first touch
// faults once per 2 MiB instead of once per 4 KiB: at most twice the bytes asked for, and only
// where that stays within the call's cap. A first routed N = 256 call (1.3-1.9 MiB of
// workspace on 2 threads) took 285 / 361 page faults (FP32 / FP64-6) at about 10 us each on the
// VM of docs/bench; with whole pages from 1 MiB it took 23 / 29, and the first call's time over
// a warm one went from 3.30 / 4.24 ms to 1.05 / 1.07 ms (medians over 11 processes each, old
// and new library alternating; `amxblas_bench --first-call 256`). Until then whole pages
// started at 8 MiB.
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kHugeFrom = kHugePage / 2;

struct Idle {
    void* p;
    std::size_t bytes;
};

struct Pool {
    std::mutex mu;
    Idle idle[kIdleSlots + 1] = {};  // one over while a returned buffer is placed
    int count = 0;
    bool closed = false;  // after exit: nothing is kept any more
    std::uint64_t fresh = 0, reused = 0;

    std::size_t idle_bytes() const {
        std::size_t s = 0;
        for (int q = 0; q < count; ++q) s += idle[q].bytes;
        return s;
    }
    Idle take(int q) {
        const Idle x = idle[q];
        idle[q] = idle[--count];
        return x;
    }
};

void close_pool();

Pool& pool() {
    // Never destroyed: a call made by another exit handler after close_pool() still finds it.
    static Pool* const p = [] {
        Pool* q = new Pool;
        atexit(close_pool);
        pthread_atfork([] { pool().mu.lock(); }, [] { pool().mu.unlock(); }, [] { pool().mu.unlock(); });
        return q;
    }();
    return *p;
}

// Up to kIdleSlots buffers taken out of the pool, freed after its lock is dropped.
struct FreeList {
    Idle x[kIdleSlots + 1] = {};
    int n = 0;
    void add(const Idle& i) { x[n++] = i; }
    ~FreeList() {
        for (int q = 0; q < n; ++q) free(x[q].p);
    }
};

void close_pool() {
    FreeList doomed;
    Pool& pl = pool();
    std::lock_guard<std::mutex> lock(pl.mu);
    pl.closed = true;
    while (pl.count > 0) doomed.add(pl.take(0));
}

// The bytes to allocate for a request of `bytes` under the call's cap (0: none): whole huge
// pages from kHugeFrom on, unless that would pass the cap.
std::size_t rounded(std::size_t bytes, std::size_t cap) {
    const std::size_t whole = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (bytes >= kHugeFrom && (cap == 0 || whole <= cap)) return whole;
    return (bytes + kAlign - 1) / kAlign * kAlign;
}

// Fresh workspaces up to this size are mapped page by page by the caller when allocated. A
// call touches only the per-participant parts of the threads that joined it, so a pool worker
// that joined the first call late left its block accumulators unmapped, and the second call
// faulted them in (16 faults, 10 us each, in an N = 256 SGEMM: kernels_second_call_test on a
// loaded machine). Larger workspaces are left to their users' first touch, which places each
// thread's part on its own NUMA node; their calls are long enough that a few faults are noise.
constexpr std::size_t kPrefaultUpTo = std::size_t(4) << 20;

void* allocate(std::size_t bytes) {
    const bool huge = bytes >= kHugeFrom && bytes % kHugePage == 0;
    void* p = nullptr;
    if (posix_memalign(&p, huge ? kHugePage : kAlign, bytes) != 0) return nullptr;
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);
    if (bytes <= kPrefaultUpTo) {
        volatile char* c = static_cast<char*>(p);
        for (std::size_t at = 0; at < bytes; at += 4096) c[at] = 0;
    }
    return p;
}

// The arena of this thread's sample, if one is running (WorkspaceArena).
thread_local WorkspaceArena* t_arena = nullptr;

}  // namespace

WorkspaceArena::WorkspaceArena(void* base, std::size_t bytes)
    : base_(static_cast<char*>(base)), bytes_(bytes), outer_(t_arena) {
    t_arena = this;
}

WorkspaceArena::~WorkspaceArena() { t_arena = outer_; }

void start_workspace_pool() { (void)pool(); }

const char* lease_workspace(std::size_t bytes, std::size_t cap, WorkspaceLease* out) {
    if (cap != 0 && bytes > cap) return reason::memory_workspace_cap;
    if (bytes == 0) bytes = 1;
    if (WorkspaceArena* a = t_arena) {
        const std::size_t at = (a->used_ + kAlign - 1) / kAlign * kAlign;
        if (at <= a->bytes_ && bytes <= a->bytes_ - at) {
            out->p_ = a->base_ + at;
            out->capacity_ = bytes;
            out->arena_ = a;
            out->arena_mark_ = a->used_;
            a->used_ = at + bytes;
            return nullptr;
        }
    }
    const std::size_t want = rounded(bytes, cap);
    Pool& pl = pool();
    {
        FreeList superseded;
        std::lock_guard<std::mutex> lock(pl.mu);
        int best = -1;
        for (int q = 0; q < pl.count; ++q)
            if (pl.idle[q].bytes >= want && (best < 0 || pl.idle[q].bytes < pl.idle[best].bytes)) best = q;
        if (best >= 0) {
            const Idle x = pl.take(best);
            ++pl.reused;
            out->p_ = x.p;
            out->capacity_ = x.bytes;
            out->retain_ = cap != 0 ? cap : kDefaultRetainBytes;
            return nullptr;
        }
        for (int q = pl.count - 1; q >= 0; --q)  // none fits: the smaller ones are superseded
            if (pl.idle[q].bytes < want) superseded.add(pl.take(q));
        ++pl.fresh;
    }
    void* p = allocate(want);
    if (!p) return reason::memory_alloc_failed;
    out->p_ = p;
    out->capacity_ = want;
    out->retain_ = cap != 0 ? cap : kDefaultRetainBytes;
    return nullptr;
}

WorkspaceLease::~WorkspaceLease() {
    if (!p_) return;
    if (arena_) {
        arena_->used_ = arena_mark_;
        return;
    }
    FreeList doomed;
    Pool& pl = pool();
    std::lock_guard<std::mutex> lock(pl.mu);
    if (pl.closed || capacity_ > retain_) {
        doomed.add({p_, capacity_});
        return;
    }
    pl.idle[pl.count++] = {p_, capacity_};
    // Over a bound: drop the smallest idle buffers first (the one just returned included).
    while (pl.count > kIdleSlots || pl.idle_bytes() > retain_) {
        int smallest = 0;
        for (int q = 1; q < pl.count; ++q)
            if (pl.idle[q].bytes < pl.idle[smallest].bytes) smallest = q;
        doomed.add(pl.take(smallest));
    }
}

WorkspacePoolStats workspace_pool_stats() {
    Pool& pl = pool();
    std::lock_guard<std::mutex> lock(pl.mu);
    WorkspacePoolStats s;
    s.idle_buffers = pl.count;
    s.idle_bytes = pl.idle_bytes();
    s.fresh = pl.fresh;
    s.reused = pl.reused;
    return s;
}

void workspace_pool_trim() {
    FreeList doomed;
    Pool& pl = pool();
    std::lock_guard<std::mutex> lock(pl.mu);
    while (pl.count > 0) doomed.add(pl.take(0));
}

}  // namespace amxblas::kernels

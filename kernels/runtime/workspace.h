// The per-process pool of call workspaces (the packed component buffers and the per-thread
// block accumulators of one emulated GEMM).
//
// A fresh workspace costs a page fault per page on its first touch, and glibc hands large
// blocks (above its mmap threshold, at most 32 MiB) back to the kernel on free(), so before the
// pool every large call paid those faults again: at N = 2048 more than the split itself. The
// pool keeps the buffers of finished calls and gives a later call the smallest one that fits.
//
// Bounds: the idle buffers kept add up to at most the retain limit, which is the call's
// workspace cap (AMXBLAS_MAX_WORKSPACE_MB) when one is set, else kDefaultRetainBytes; at most
// kIdleSlots of them are kept. A call that finds no idle buffer big enough frees the smaller
// idle ones (a program whose sizes grow keeps one buffer, not one per size) and allocates.
// Concurrent callers each lease their own buffer; the pool's lock is held only to pick one
// (never across an allocation or a free). At exit (or when the library is unloaded) every idle
// buffer is freed, and a buffer given back after that is freed at once. Around fork() the lock
// is taken and released (pthread_atfork), so the child never inherits it locked; the child
// keeps the parent's idle buffers (copy-on-write, valid there).
#pragma once

#include <cstddef>
#include <cstdint>

namespace amxblas::kernels {

constexpr std::size_t kDefaultRetainBytes = std::size_t(1) << 30;  // 1 GiB
constexpr int kIdleSlots = 4;

// One call's workspace: 64-byte aligned (from 1 MiB on: 2 MiB aligned, whole 2 MiB pages and
// advised as transparent huge pages, where the call's cap allows), given back to the pool when
// the lease ends.
class WorkspaceArena;
class WorkspaceLease {
public:
    WorkspaceLease() = default;
    ~WorkspaceLease();
    WorkspaceLease(const WorkspaceLease&) = delete;
    WorkspaceLease& operator=(const WorkspaceLease&) = delete;
    void* data() const { return p_; }

private:
    friend const char* lease_workspace(std::size_t, std::size_t, WorkspaceLease*);
    void* p_ = nullptr;
    std::size_t capacity_ = 0;  // bytes allocated (>= the bytes asked for)
    std::size_t retain_ = 0;    // the pool's retain limit for this buffer's call
    WorkspaceArena* arena_ = nullptr;  // carved from an arena (below): given back to it
    std::size_t arena_mark_ = 0;       // the arena's use before this lease
};

// While it lives, the leases of its thread that fit are carved from [base, base + bytes), last
// in first out, instead of taken from the pool. For the small GEMM an auto call certifies first
// (kernels/driver/gemm_sample.h): its engines lease their workspaces from the one buffer the
// sample leased, so the pool holds no small buffer of the sample's for the call's own leases to
// supersede (then a second call would allocate, and fault, afresh), and the sample borrows the
// call's idle buffer in a later call.
class WorkspaceArena {
public:
    WorkspaceArena(void* base, std::size_t bytes);
    ~WorkspaceArena();
    WorkspaceArena(const WorkspaceArena&) = delete;
    WorkspaceArena& operator=(const WorkspaceArena&) = delete;

private:
    friend const char* lease_workspace(std::size_t, std::size_t, WorkspaceLease*);
    friend class WorkspaceLease;
    char* base_;
    std::size_t bytes_, used_ = 0;
    WorkspaceArena* outer_;  // the thread's arena before this one
};

// Leases `bytes` (cap: the call's workspace cap, 0 = none). Returns nullptr, or
// "memory:workspace-cap" (bytes > cap) or "memory:alloc-failed" with *out empty.
const char* lease_workspace(std::size_t bytes, std::size_t cap, WorkspaceLease* out);

// Creates the pool (its lock and its exit and fork handlers) if it is not there yet; the first
// lease does it otherwise. For kernels/driver/process_state.h.
void start_workspace_pool();

// What the pool holds now and has done (tests and the benchmark).
struct WorkspacePoolStats {
    int idle_buffers = 0;
    std::size_t idle_bytes = 0;
    std::uint64_t fresh = 0;   // leases served by a new allocation
    std::uint64_t reused = 0;  // leases served by an idle buffer
};
WorkspacePoolStats workspace_pool_stats();
// Frees every idle buffer now (what exit does); leased buffers are unaffected.
void workspace_pool_trim();

}  // namespace amxblas::kernels

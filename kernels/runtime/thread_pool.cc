#include "kernels/runtime/thread_pool.h"

#include <immintrin.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <new>

#include "kernels/common/fp_environment.h"

namespace amxblas::kernels {
namespace {

// How long a thread spins before it sleeps: long enough to catch the next parallel phase of
// the same call (the pack of B after the pack of A, the block loop after the packs: a few
// microseconds apart), short enough that an idle worker gives its core back almost at once.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);
constexpr auto kCallerSpin = std::chrono::microseconds(20);
// How long a caller waits, at most, for a helper that has finished its part to free its slot.
constexpr auto kCallerRelease = std::chrono::microseconds(1000);
constexpr int kMaxWorkers = 255;

// A posted job: the task, and the floating-point environment it runs under. Every participant
// computes under the MXCSR of the thread that posted it (the library's own, inside a routed
// call), not under whatever its thread last had: a worker keeps the environment of the thread
// that created it, which may have been a caller's directed rounding or FTZ. The flags the
// workers raise come back to the posting thread's MXCSR, as if it had done all the work.
struct Job {
    ParallelTask* task;
    unsigned mxcsr;                     // control bits, flags cleared
    std::atomic<unsigned> raised{0};  // the flags the workers raised
};

// Worker::slot holds nullptr (idle), kClaimed (a caller is handing it a job), a Job* (posted,
// not started), kRunning (running a job) or kDead (its thread could not be created).
Job* const kClaimed = reinterpret_cast<Job*>(std::uintptr_t(1));
Job* const kRunning = reinterpret_cast<Job*>(std::uintptr_t(2));
Job* const kDead = reinterpret_cast<Job*>(std::uintptr_t(3));
bool is_job(const Job* j) { return reinterpret_cast<std::uintptr_t>(j) > 3; }

struct Worker {
    std::atomic<Job*> slot{kClaimed};    // created claimed by the caller that needs it
    std::atomic<std::uint32_t> wake{0};  // futex word: bumped when a job is posted
    std::atomic<std::uint32_t> done{0};  // futex word: bumped after each job run
    std::atomic<int> sleeping{0};        // the worker waits on `wake`
    std::atomic<int> caller_waiting{0};  // a caller waits on `done`
    std::atomic<int> started{0};         // its start-up (stack touch, sched_yield) is over
    int participant = 0;                 // written before the job is posted
    Worker* retired_next = nullptr;      // in a forked child: the parent's workers, kept listed
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex word");

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
            nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* word) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
            nullptr, 0);
}

// Spins until done() or the budget is spent; true when done() became true.
template <typename Done, typename Duration>
bool spin_until(Done&& done, Duration budget) {
    const auto end = std::chrono::steady_clock::now() + budget;
    for (int i = 1;; ++i) {
        if (done()) return true;
        _mm_pause();
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= end) return false;
    }
}

// The pool: a fixed array of workers, filled on demand, never shrunk. Lock-free, so a fork at
// any moment leaves nothing locked in the child.
std::atomic<int> g_reserved{0};  // entries handed out (some may not be published yet)
std::atomic<Worker*> g_workers[kMaxWorkers];

Job* wait_for_job(Worker* w) {
    Job* j = nullptr;
    if (spin_until([&] { return is_job(j = w->slot.load(std::memory_order_acquire)); }, kWorkerSpin))
        return j;
    for (;;) {
        const std::uint32_t seq = w->wake.load();
        w->sleeping.store(1);
        j = w->slot.load();
        if (!is_job(j)) futex_wait(&w->wake, seq);
        w->sleeping.store(0);
        j = w->slot.load(std::memory_order_acquire);
        if (is_job(j)) return j;
    }
}

// How much of its stack a participant of a parallel call maps before its first job: the
// deepest the library's phases reach below run_parallel's frame (the INT8 residue pack takes
// about 70 KiB: int8_residues' three FP64 blocks and for_each_block's), with room to spare.
// Which participant runs which phase varies from call to call, so without it a later call can
// take a thread deeper into its stack than before: fresh pages, each a page fault inside that
// call (about 10 us on the development VM). kernels_second_call_test, which fails on such a
// fault, failed in 1 to 7 of 8 runs with no touch or 8 KiB on the workers; on a loaded machine
// the caller's own stack took 1 or 2 faults in a warm call of some runs.
constexpr std::size_t kStackTouch = std::size_t(128) << 10;
constexpr std::size_t kStackMargin = std::size_t(64) << 10;  // never touched: the stack's last 64 KiB

// The bytes of this thread's stack below the caller's frame, less kStackMargin; 0 when
// unknown. (A user's thread may have a small stack: the touch never goes past it.)
std::size_t stack_room() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
    void* low = nullptr;
    std::size_t size = 0;
    const bool known = pthread_attr_getstack(&attr, &low, &size) == 0;
    pthread_attr_destroy(&attr);
    char here = 0;
    const auto at = reinterpret_cast<std::uintptr_t>(&here), end = reinterpret_cast<std::uintptr_t>(low);
    return known && at > end + kStackMargin ? at - end - kStackMargin : 0;
}

// Writes one byte per 4 KiB page of a frame of `bytes` below the caller's, top down, so the
// kernel maps those pages now.
[[gnu::noinline]] void touch_stack(std::size_t bytes) {
    char* frame = static_cast<char*>(__builtin_alloca(bytes + 1));
    for (std::size_t at = bytes; at >= 4096; at -= 4096) frame[at] = 0;
    frame[0] = 0;
    asm volatile("" : : "r"(frame) : "memory");  // the stores stay: the frame counts as read
}

thread_local bool t_stack_ready = false;

// Once per thread: maps kStackTouch bytes of stack (or what there is) below the caller's frame.
void prepare_stack() {
    if (t_stack_ready) return;
    t_stack_ready = true;
    touch_stack(std::min(kStackTouch, stack_room()));
}

void* worker_main(void* arg) {
    Worker* w = static_cast<Worker*>(arg);
    prepare_stack();
    // The caller yields only when a worker is slow to free its slot (run_parallel, under load):
    // the first such yield of a process faulted in libc's code page of sched_yield inside a
    // warm call (kernels_second_call_test's one fault with a busy core beside it; perf's
    // exceptions:page_fault_user put every one of them at __sched_yield). Map it now.
    sched_yield();
    w->started.store(1, std::memory_order_release);
    for (;;) {
        Job* j = wait_for_job(w);
        if (!w->slot.compare_exchange_strong(j, kRunning, std::memory_order_acq_rel)) continue;  // withdrawn
        write_mxcsr(j->mxcsr);
        j->task->run(w->participant);
        if (const unsigned flags = read_mxcsr() & mxcsr::kFlags) j->raised.fetch_or(flags, std::memory_order_relaxed);
        // done first: a caller that claims this worker next reads `done` after the slot frees.
        w->done.fetch_add(1);
        if (w->caller_waiting.exchange(0)) futex_wake(&w->done);
        w->slot.store(nullptr, std::memory_order_release);
    }
    return nullptr;
}

// The parent's workers, in a forked child: never used again, never freed (they may have been
// mid-job), but still referenced, so that a leak checker does not report them.
Worker* g_retired = nullptr;

// In a forked child only the forking thread exists: retire the parent's workers and start
// afresh; the child makes its own on its first parallel call.
void forget_workers_after_fork() {
    for (auto& entry : g_workers) {
        if (Worker* w = entry.load(std::memory_order_relaxed)) {
            w->retired_next = g_retired;
            g_retired = w;
        }
        entry.store(nullptr, std::memory_order_relaxed);
    }
    g_reserved.store(0, std::memory_order_relaxed);
}

void register_fork_handler() {
    static const bool registered = [] { return pthread_atfork(nullptr, nullptr, forget_workers_after_fork) == 0; }();
    (void)registered;
}

// Signals a worker keeps: the synchronous ones, raised by its own instructions.
sigset_t worker_signal_mask() {
    sigset_t s;
    sigfillset(&s);
    for (int sig : {SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&s, sig);
    return s;
}

// A new worker, already claimed for the caller; nullptr when none can be made.
Worker* create_worker() {
    register_fork_handler();
    const int i = g_reserved.fetch_add(1);
    if (i >= kMaxWorkers) {
        g_reserved.store(kMaxWorkers);
        return nullptr;
    }
    Worker* w = new (std::nothrow) Worker;
    if (!w) return nullptr;  // the entry stays unpublished: skipped by everyone
    const sigset_t block = worker_signal_mask();
    sigset_t old;
    pthread_sigmask(SIG_SETMASK, &block, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    const bool ok = pthread_create(&thread, &attr, worker_main, w) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (ok) pthread_setname_np(thread, "amxblas-worker");
    if (!ok) w->slot.store(kDead);
    g_workers[i].store(w, std::memory_order_release);
    return ok ? w : nullptr;
}

// An idle worker of the pool, claimed (slot == kClaimed), that is not among the `taken` ones;
// nullptr when there is none. (A helper that already finished its part of this job is idle
// again: claiming it twice would make the caller wait for a posting it withdrew.)
Worker* claim_idle_worker(Worker* const* taken, int ntaken) {
    const int n = std::min(g_reserved.load(), kMaxWorkers);
    for (int i = 0; i < n; ++i) {
        Worker* w = g_workers[i].load(std::memory_order_acquire);
        if (!w || std::find(taken, taken + ntaken, w) != taken + ntaken) continue;
        Job* idle = nullptr;
        if (w->slot.compare_exchange_strong(idle, kClaimed, std::memory_order_acquire)) return w;
    }
    return nullptr;
}

}  // namespace

void start_thread_pool() { register_fork_handler(); }

int pool_workers() {
    int n = 0;
    for (auto& w : g_workers)
        if (Worker* p = w.load(); p && p->slot.load() != kDead) ++n;
    return n;
}

int pool_workers_started() {
    int n = 0;
    for (auto& w : g_workers)
        if (Worker* p = w.load(); p && p->slot.load() != kDead && p->started.load(std::memory_order_acquire)) ++n;
    return n;
}

void run_parallel(int threads, ParallelTask& task) {
    prepare_stack();
    const int helpers_wanted = std::min(threads, kMaxWorkers + 1) - 1;
    if (helpers_wanted <= 0) {
        task.run(0);
        return;
    }
    Job job{&task, read_mxcsr() & ~mxcsr::kFlags};
    Worker* helper[kMaxWorkers];
    std::uint32_t done_before[kMaxWorkers];
    int helpers = 0;
    while (helpers < helpers_wanted) {
        Worker* w = claim_idle_worker(helper, helpers);
        if (!w) w = create_worker();
        if (!w) break;
        done_before[helpers] = w->done.load(std::memory_order_acquire);
        w->participant = helpers + 1;
        helper[helpers++] = w;
        w->slot.store(&job);
        w->wake.fetch_add(1);
        if (w->sleeping.load()) futex_wake(&w->wake);
    }

    task.run(0);

    // Everything is claimed. Withdraw the job from workers that have not started it; wait for
    // those that have.
    for (int h = 0; h < helpers; ++h) {
        Worker* w = helper[h];
        Job* posted = &job;
        if (w->slot.compare_exchange_strong(posted, nullptr, std::memory_order_acq_rel)) continue;
        auto finished = [&] { return w->done.load(std::memory_order_acquire) != done_before[h]; };
        if (!spin_until(finished, kCallerSpin))
            while (!finished()) {
                w->caller_waiting.store(1);
                if (!finished()) futex_wait(&w->done, done_before[h]);
            }
        // The worker bumps `done` before it frees its slot, and wakes a sleeping caller in
        // between (a system call). Wait for that short rest, so that this caller's next parallel
        // call finds its helper idle: otherwise it found it still running and started another
        // worker (in most processes within 12 N = 1024 SGEMM calls: a thread start and its page
        // faults inside a warm call). Spin, then yield the core (the worker may be waiting for
        // it); bounded at kCallerRelease: a thread start costs more, but a worker descheduled
        // just there is not waited for.
        const auto released = [&] { return w->slot.load(std::memory_order_acquire) != kRunning; };
        if (!spin_until(released, kCallerSpin)) {
            const auto end = std::chrono::steady_clock::now() + kCallerRelease;
            while (!released() && std::chrono::steady_clock::now() < end) sched_yield();
        }
    }
    // The workers' flags (each worker's are read before it bumps `done`, which was waited for).
    const unsigned raised = job.raised.load(std::memory_order_relaxed);
    if (const unsigned current = read_mxcsr(); raised & ~current) write_mxcsr(current | raised);
}

}  // namespace amxblas::kernels

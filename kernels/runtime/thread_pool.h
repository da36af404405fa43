// The kernels' own worker threads. The split, the pack and the block loop of every routed call
// run on the calling thread plus up to threads - 1 workers of this pool, not on OpenMP.
//
// Why not OpenMP (libgomp):
// - fork: libgomp keeps its pool across fork() and the child's next parallel region waits for
//   threads that do not exist (GCC bug 60035, never fixed; OpenBLAS built with OpenMP has the
//   same hang, OpenMathLib/OpenBLAS#294 and #343). omp_pause_resource_all() before fork is the
//   only OpenMP remedy, and it may break a region another thread is running (OpenBLAS#4080).
//   Here a pthread_atfork child handler forgets the parent's workers; the child makes new ones
//   on its first parallel call. The parent is untouched.
// - contention: libgomp's default wait policy spins, and a region ends only when every thread
//   of the team has arrived. With one core taken by another process, a routed N = 256 SGEMM
//   took 30-60 ms instead of 1.5 ms. Here the work is claimed dynamically, and a worker that has
//   not started when the caller has claimed everything is withdrawn, not waited for: the caller
//   only waits for workers that are running a piece of the work. Idle workers spin briefly and
//   then sleep on a futex.
//
// Workers block asynchronous signals (SIGINT, SIGTERM, ...), so the program's handlers run on
// its own threads; synchronous ones (SIGILL, SIGSEGV, ...) stay deliverable, which the AMX
// trap-and-emulate harness needs.
#pragma once

#include <algorithm>
#include <atomic>

namespace amxblas::kernels {

// Work that several threads run at once. run(participant) is called once on the calling thread
// (participant 0) and once on each worker that joins (participants 1 .. threads - 1, distinct,
// not necessarily all of them): it must take its share of the work dynamically, so that
// participant 0 alone can finish it.
class ParallelTask {
public:
    virtual void run(int participant) = 0;

protected:
    ~ParallelTask() = default;
};

// Runs task on the caller and up to threads - 1 pool workers; returns when every participant
// that started has returned. threads <= 1 runs it on the caller only. Never fails: without
// workers (thread creation failed, pool exhausted by concurrent callers) the caller does it all.
void run_parallel(int threads, ParallelTask& task);

// Workers the pool holds now (for tests: after fork the child starts with 0).
int pool_workers();

// Of those, the workers whose thread has finished starting (its stack touched): a test that
// counts a warm call's page faults waits for them, since a start that falls into the call
// faults in its stack there.
int pool_workers_started();

// Registers the pool's fork handler if it is not yet (the first worker does it otherwise);
// starts no thread. For kernels/driver/process_state.h.
void start_thread_pool();

// for i in [0, count): body(i, participant), indices handed out one at a time.
template <typename Body>
void parallel_for(int threads, int count, Body&& body) {
    struct Loop final : ParallelTask {
        Body& body;
        int count;
        std::atomic<int> next{0};
        Loop(Body& b, int c) : body(b), count(c) {}
        void run(int participant) override {
            for (int i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) body(i, participant);
        }
    };
    Loop loop(body, count);
    run_parallel(std::min(threads, count), loop);
}

}  // namespace amxblas::kernels

// The kernels' thread pool (kernels/thread_pool.h): every index runs exactly once, on
// distinct participant numbers below the thread count, from concurrent callers too; and after
// fork() the child's parallel calls run on workers of its own (the parent's do not exist there).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "kernels/thread_pool.h"

namespace kn = amxblas::kernels;

namespace {

// Runs parallel_for over count indices; 0 when every index ran once with a valid participant.
int run_and_count_errors(int threads, int count) {
    std::vector<std::atomic<int>> hits(count);
    std::atomic<int> bad_participant{0};
    kn::parallel_for(threads, count, [&](int i, int who) {
        hits[i].fetch_add(1);
        if (who < 0 || who >= threads) bad_participant.fetch_add(1);
    });
    int errors = bad_participant.load();
    for (auto& h : hits) errors += h.load() != 1;
    return errors;
}

void every_index_once(void**) {
    for (int threads : {1, 2, 3, 8})
        for (int count : {0, 1, 2, 7, 1000}) assert_int_equal(run_and_count_errors(threads, count), 0);
}

void concurrent_callers(void**) {
    std::atomic<int> errors{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 4; ++t)
        callers.emplace_back([&] {
            for (int rep = 0; rep < 200; ++rep) errors.fetch_add(run_and_count_errors(3, 257));
        });
    for (auto& c : callers) c.join();
    assert_int_equal(errors.load(), 0);
    assert_true(kn::pool_workers() >= 2);
}

// A participant that is still running when the caller has taken everything is waited for:
// the caller sees the worker's writes after run_parallel returns.
void waits_for_started_workers(void**) {
    for (int rep = 0; rep < 50; ++rep) {
        std::vector<int> out(64, 0);
        kn::parallel_for(2, 64, [&](int i, int) {
            for (volatile int spin = 0; spin < 20000; spin = spin + 1) {
            }
            out[i] = i + 1;
        });
        for (int i = 0; i < 64; ++i) assert_int_equal(out[i], i + 1);
    }
}

void fork_child_gets_its_own_workers(void**) {
    assert_int_equal(run_and_count_errors(2, 100), 0);
    assert_true(kn::pool_workers() >= 1);
    const pid_t child = fork();
    if (child == 0) {
        const bool forgot = kn::pool_workers() == 0;
        const int errors = run_and_count_errors(2, 100) + run_and_count_errors(4, 1000);
        const bool remade = kn::pool_workers() >= 1;
        _exit(forgot && remade && errors == 0 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(run_and_count_errors(2, 100), 0);  // the parent's pool is untouched
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_index_once),
        cmocka_unit_test(concurrent_callers),
        cmocka_unit_test(waits_for_started_workers),
        cmocka_unit_test(fork_child_gets_its_own_workers),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

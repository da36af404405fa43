// mispredicted= (issue 45): a call more than 1.5x off the cost model's prediction for the path it
// took, either way, says so on its line with its time over the prediction, and the summary
// counts such calls per row; a call within 1.5x, or without a prediction, says nothing.
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>


extern "C" {
#include <cmocka.h>
}

#include "shim/log.h"
#include "tests/shim/child_log.h"

using namespace amxblas;

namespace {

CallRecord forwarded_call(double seconds, double predicted_s) {
    CallRecord r{};
    r.routine = Routine::dgemm_;
    r.layout = "col";
    r.transa = r.transb = 'N';
    r.m = r.n = r.k = r.lda = r.ldb = r.ldc = 1024;
    r.route = Route::forward;
    r.reason = "cost:no-gain";
    r.predicted_speedup = 0.25;
    r.predicted_s = predicted_s;
    r.seconds = seconds;
    return r;
}

std::string line_of(const CallRecord& r) {
    char line[640];
    format_call_line(r, line, sizeof line);
    return line;
}

void the_line_says_it(void**) {
    const std::string slow = line_of(forwarded_call(2e-3, 1e-3));
    assert_non_null(std::strstr(slow.c_str(), " predicted=0.25x mispredicted=2x time_us=2000.0 "));
    assert_non_null(std::strstr(line_of(forwarded_call(0.5e-3, 1e-3)).c_str(), " mispredicted=0.5x "));
    for (double seconds : {1e-3, 1.4e-3, 1.49e-3, 0.7e-3})  // within 1.5x either way
        assert_null(std::strstr(line_of(forwarded_call(seconds, 1e-3)).c_str(), "mispredicted"));
    assert_null(std::strstr(line_of(forwarded_call(9e-3, 0)).c_str(), "mispredicted"));  // no prediction
    CallRecord routed = forwarded_call(4e-3, 1e-3);
    routed.route = Route::amx_fp64_21;
    routed.reason = nullptr;
    routed.backend = "avx512";
    routed.threads = 2;
    assert_non_null(std::strstr(line_of(routed).c_str(), " predicted=0.25x mispredicted=4x "));
    assert_true(misprediction(routed) == 4.0);
    assert_true(misprediction(forwarded_call(1e-3, 1e-3)) == 0);
}

// The summary of a child that logged these calls (AMXBLAS_VERBOSE=1, written at its exit).
std::string child_summary() {
    return amxblas::test::child_log([] {
        for (double seconds : {1e-3, 3e-3, 0.2e-3, 1.2e-3, 5e-3}) log_call(forwarded_call(seconds, 1e-3));  // 3 off
        CallRecord s = forwarded_call(1e-3, 1e-3);
        s.routine = Routine::sgemm_;
        log_call(s);
    });
}

void the_summary_counts_them(void**) {
    const std::string log = child_summary();
    assert_non_null(std::strstr(log.c_str(), "amxblas: summary routine=dgemm_ route=forward reason=cost:no-gain calls=5 "));
    const char* row = std::strstr(log.c_str(), "routine=dgemm_");
    assert_non_null(row);
    const std::string dgemm_row(row, std::strchr(row, '\n'));
    assert_true(dgemm_row.size() > 15 && dgemm_row.compare(dgemm_row.size() - 15, 15, " mispredicted=3") == 0);
    const char* srow = std::strstr(log.c_str(), "routine=sgemm_");
    assert_non_null(srow);
    assert_null(std::strstr(std::string(srow, std::strchr(srow, '\n')).c_str(), "mispredicted"));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_line_says_it),
        cmocka_unit_test(the_summary_counts_them),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

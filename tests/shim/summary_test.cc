// The AMXBLAS_VERBOSE=1 summary loses no call (issue 27, item 10): a process with more distinct
// (routine, route, reason) combinations than the summary has rows still gets every call counted,
// the rest in explicit rows routine=other (one per route), and a note says so. Each case runs
// in a forked child (the settings are read once per process, the summary is written at exit)
// and the parent reads the child's log.
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>


extern "C" {
#include <cmocka.h>
}

#include "shim/log.h"
#include "tests/shim/child_log.h"

using namespace amxblas;
using amxblas::test::child_log;

namespace {

// Reasons are static strings in the library (kernels/reasons.def); these stand in for them.
const char* const kReasons[] = {"test:r0", "test:r1", "test:r2", "test:r3", "test:r4",
                                "test:r5", "test:r6", "test:r7", "test:r8"};

CallRecord record(Routine routine, Route route) {
    CallRecord rec{};
    rec.routine = routine;
    rec.layout = "col";
    rec.transa = rec.transb = 'N';
    rec.m = rec.n = rec.k = rec.lda = rec.ldb = rec.ldc = 4;
    rec.route = route;
    rec.seconds = 1e-6;
    return rec;
}

// Logs `combinations` distinct (routine, forward, reason) calls, plus `scaled` beta-scale calls of
// one more row each, in a child whose log is returned.
std::string run_child(int combinations, int scaled) {
    return child_log([=] {
        for (int i = 0; i < combinations + scaled; ++i) {
            const bool scale = i >= combinations;
            CallRecord rec = record(static_cast<Routine>(i % kRoutineCount), scale ? Route::beta_scale : Route::forward);
            rec.reason = scale ? "test:scaled" : kReasons[(i / kRoutineCount) % 9];
            log_call(rec);
        }
    });
}

// The log's lines, split at spaces. (Plain string parsing, not <regex>: std::regex took most of
// this file's compile time, 20 s in the sanitizer build.)
std::vector<std::vector<std::string>> lines_of_words(const std::string& log) {
    std::vector<std::vector<std::string>> lines;
    std::istringstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::vector<std::string> w;
        for (std::string word; words >> word;) w.push_back(word);
        lines.push_back(w);
    }
    return lines;
}

// Whether `word` is `name=` followed by digits only; their value in *value.
bool numeric_field(const std::string& word, const std::string& name, long* value) {
    const std::string prefix = name + "=";
    if (word.compare(0, prefix.size(), prefix) != 0 || word.size() == prefix.size()) return false;
    if (word.find_first_not_of("0123456789", prefix.size()) != std::string::npos) return false;
    *value = std::stol(word.substr(prefix.size()));
    return true;
}

// FIELD=N on the summary's header line ("amxblas: summary pid=... calls=N ..."); -1 without one.
long header_field(const std::string& log, const char* field) {
    long value = -1, pid = 0;
    for (const auto& w : lines_of_words(log))
        if (w.size() > 2 && w[0] == "amxblas:" && w[1] == "summary" && numeric_field(w[2], "pid", &pid))
            for (std::size_t i = 3; i < w.size(); ++i) numeric_field(w[i], field, &value);
    return value;
}

// The calls of every row "amxblas: summary routine=R route=X [products=P] [reason=W] calls=N ...".
long sum_of_rows(const std::string& log) {
    long sum = 0;
    for (const auto& w : lines_of_words(log)) {
        if (w.size() < 6 || w[0] != "amxblas:" || w[1] != "summary" || w[2].rfind("routine=", 0) != 0 ||
            w[3].rfind("route=", 0) != 0)
            continue;
        std::size_t i = 4;
        if (w[i].rfind("products=", 0) == 0) ++i;
        if (i < w.size() && w[i].rfind("reason=", 0) == 0) ++i;
        long calls = 0;
        if (i + 1 < w.size() && numeric_field(w[i], "calls", &calls)) sum += calls;
    }
    return sum;
}

void every_call_is_counted_past_the_rows(void**) {
    const int combinations = 9 * kRoutineCount;  // 144 distinct rows
    const std::string log = run_child(combinations, 3);
    assert_int_equal(header_field(log, "calls"), combinations + 3);
    assert_int_equal(header_field(log, "forwarded"), combinations);
    assert_int_equal(header_field(log, "scaled"), 3);
    assert_int_equal(sum_of_rows(log), combinations + 3);
    assert_true(log.find("amxblas: summary routine=other route=forward calls=") != std::string::npos);
    assert_true(log.find("amxblas: summary routine=other route=beta-scale calls=3 ") != std::string::npos);
    assert_true(log.find("amxblas: note: the summary has ") != std::string::npos);
}

void no_other_row_when_the_rows_suffice(void**) {
    const std::string log = run_child(2 * kRoutineCount, 0);
    assert_int_equal(header_field(log, "calls"), 2 * kRoutineCount);
    assert_int_equal(sum_of_rows(log), 2 * kRoutineCount);
    assert_true(log.find("routine=other") == std::string::npos);
    assert_true(log.find("amxblas: note:") == std::string::npos);
}

// Routed FP64 calls are counted per engine and count: BF16's routes name their products,
// INT8's one route is split by its moduli.
void fp64_rows_per_engine_and_count(void**) {
    const std::string log = child_log([] {
        for (int i = 0; i < 2; ++i) log_call(record(Routine::dgemm_, Route::amx_fp64_21));
        for (int moduli : {16, 12, 16, 16}) {
            CallRecord rec = record(Routine::dgemm_, Route::amx_fp64_int8);
            rec.fp64_products = moduli;
            log_call(rec);
        }
        CallRecord rec = record(Routine::zgemm_, Route::amx_fp64_int8);
        rec.fp64_products = 16;
        log_call(rec);
    });
    assert_int_equal(header_field(log, "routed"), 7);
    assert_int_equal(sum_of_rows(log), 7);
    assert_true(log.find("amxblas: summary routine=dgemm_ route=fp64-21 calls=2 ") != std::string::npos);
    assert_true(log.find("amxblas: summary routine=dgemm_ route=fp64-int8 products=16 calls=3 ") != std::string::npos);
    assert_true(log.find("amxblas: summary routine=dgemm_ route=fp64-int8 products=12 calls=1 ") != std::string::npos);
    assert_true(log.find("amxblas: summary routine=zgemm_ route=fp64-int8 products=16 calls=1 ") != std::string::npos);
}

}  // namespace

int main() {
    const CMUnitTest tests[] = {
        cmocka_unit_test(every_call_is_counted_past_the_rows),
        cmocka_unit_test(no_other_row_when_the_rows_suffice),
        cmocka_unit_test(fp64_rows_per_engine_and_count),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

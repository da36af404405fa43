// The wisdom file's format (policy/wisdom.h): what format_wisdom writes parse_wisdom reads back,
// key for key and number for number; a damaged file is refused whole (every kind of damage
// below); an entry is found only for an equal key, and the nearest one says why not; measured
// constants replace the built-in ones, and only those; the real BLAS's measured time is what
// the model then prices.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "policy/wisdom.h"

using namespace amxblas;

namespace {

WisdomEntry sample_entry() {
    WisdomEntry e;
    e.key.cpu = "GenuineIntel family 6 model 207 stepping 2: Intel(R) Xeon(R) Processor";
    e.key.features = "avx2 avx512 avx512-bf16 avx512-vnni";
    e.key.backend = "avx512";
    e.key.threads = 2;
    e.key.blas = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so";
    e.key.blas_build = "build-id 0123abcd";
    e.key.library = "amxblas 0.1.0 model 1";
    e.measured = "2026-12-07T03:10:00Z in 4.1 s";
    e.costs.phases.step_s_fp32 = 4.5e-7;
    e.costs.phases.split_pack_bytes_s_fp64 = 2.25e9;
    e.costs.phases.overhead_s = 3.5e-5;
    for (int i = 0; i < kCostFieldCount; ++i) {
        const std::string name = kCostFields[i].name;
        if (name == "step_s_fp32" || name == "split_pack_bytes_s_fp64" || name == "overhead_s")
            e.costs.measured |= 1ULL << i;
    }
    e.costs.blas[1] = {2e-6, 1.25e10, 1e-10, 5e-11, 2.5e-11};
    e.costs.blas_measured[1] = true;
    return e;
}

std::string sample_text() { return format_wisdom({sample_entry()}); }

void round_trip(void**) {
    WisdomEntry other = sample_entry();
    other.key.backend = "reference";
    other.costs.blas[3] = {1e-6, 5e8, 0, 0, 0};
    other.costs.blas_measured[3] = true;
    const std::string text = format_wisdom({sample_entry(), other});
    std::vector<WisdomEntry> back;
    std::string why;
    assert_true(parse_wisdom(text, &back, &why));
    assert_int_equal(back.size(), 2);
    const WisdomEntry& e = back[0];
    assert_string_equal(e.key.cpu.c_str(), sample_entry().key.cpu.c_str());
    assert_string_equal(e.key.blas_build.c_str(), "build-id 0123abcd");
    assert_int_equal(e.key.threads, 2);
    assert_string_equal(e.measured.c_str(), "2026-12-07T03:10:00Z in 4.1 s");
    assert_true(e.costs.phases.step_s_fp32 == 4.5e-7);
    assert_true(e.costs.phases.split_pack_bytes_s_fp64 == 2.25e9);
    assert_true(e.costs.measured == sample_entry().costs.measured);
    assert_true(e.costs.blas_measured[1] && !e.costs.blas_measured[0] && !e.costs.blas_measured[3]);
    assert_true(e.costs.blas[1].flops_s == 1.25e10 && e.costs.blas[1].b_s == 2.5e-11);
    assert_string_equal(back[1].key.backend.c_str(), "reference");
    assert_true(back[1].costs.blas_measured[3]);
    // Comments, blank lines and indentation are free.
    std::string spaced = "# a comment\n\n" + text;
    assert_true(parse_wisdom(spaced, &back, &why));
    assert_true(parse_wisdom("amxblas-wisdom 1\n", &back, &why));  // no entries: a valid, empty file
    assert_int_equal(back.size(), 0);
}

// Each damaged text is refused, and nothing of it is returned.
void damaged_files_are_refused(void**) {
    const std::string good = sample_text();
    auto replaced = [&](const char* from, const char* to) {
        std::string s = good;
        const std::size_t at = s.find(from);
        assert_true(at != std::string::npos);
        return s.replace(at, std::strlen(from), to);
    };
    const std::vector<std::string> bad = {
        "",
        "amxblas-wisdom 2\n",
        "not wisdom at all\n",
        std::string("amxblas-wisdom 1\nentry\n") + std::string(100, '\0'),
        good.substr(0, good.size() - 4),                     // no "end"
        replaced("  threads 2\n", ""),                       // a key line missing
        replaced("  threads 2\n", "  threads 2.5\n"),
        replaced("  threads 2\n", "  threads 0\n"),
        replaced("  threads 2\n", "  threads 2\n  threads 2\n"),  // twice
        replaced("step_s_fp32 4.5e-07", "step_s_fp32 -1"),
        replaced("step_s_fp32 4.5e-07", "step_s_fp32 nan"),
        replaced("step_s_fp32 4.5e-07", "step_s_fp32 inf"),
        replaced("step_s_fp32 4.5e-07", "step_s_fp32 1e300"),
        replaced("step_s_fp32 4.5e-07", "step_s_fp32 0x1p-20"),
        replaced("step_s_fp32 4.5e-07", "step_s_fp32 4.5e-07x"),
        replaced("step_s_fp32 4.5e-07", "step_s_fp32"),
        replaced("split_pack_bytes_s_fp64 2.25e+09", "split_pack_bytes_s_fp64 0"),  // a rate that divides
        replaced("step_s_fp32", "step_s_fp33"),              // unknown word
        replaced("blas-time dgemm", "blas-time xgemm"),
        replaced("blas-time dgemm 2e-06 1.25e+10 1e-10 5e-11 2.5e-11", "blas-time dgemm 2e-06 1.25e+10 1e-10 5e-11"),
        replaced("blas-time dgemm 2e-06 1.25e+10 1e-10 5e-11 2.5e-11", "blas-time dgemm 2e-06 1.25e+10 1e-10 5e-11 2.5e-11 1"),
        replaced("blas-time dgemm 2e-06 1.25e+10 1e-10", "blas-time dgemm 2e-06 1.25e+10 -1e-10"),
        replaced("blas-time dgemm 2e-06 1.25e+10", "blas-time dgemm 2e-06 0"),
        replaced("  backend avx512\n", "  backend avx512\r\n"),  // a control character
        replaced("entry\n", "entry\nentry\n"),
        good + "entry\n",
        good + "garbage\n",
        std::string(kWisdomMaxBytes + 1, '#'),
    };
    for (std::size_t i = 0; i < bad.size(); ++i) {
        std::vector<WisdomEntry> out = {sample_entry()};
        std::string why;
        if (parse_wisdom(bad[i], &out, &why)) fail_msg("damaged text %zu was accepted", i);
        assert_int_equal(out.size(), 0);
        assert_true(!why.empty());
    }
}

void keys_must_be_equal(void**) {
    const std::vector<WisdomEntry> entries = {sample_entry()};
    std::string why;
    WisdomKey k = sample_entry().key;
    assert_non_null(find_wisdom(entries, k, &why));
    struct Change {
        void (*apply)(WisdomKey*);
        const char* says;
        bool stale;  // stale or foreign (a warning), rather than measured for other settings
    };
    const Change changes[] = {
        {[](WisdomKey* x) { x->cpu += "!"; }, "another CPU", true},
        {[](WisdomKey* x) { x->features = "avx2"; }, "another CPU", true},
        {[](WisdomKey* x) { x->library = "amxblas 0.2.0 model 1"; }, "another version", true},
        {[](WisdomKey* x) { x->blas = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"; }, "another BLAS library", true},
        {[](WisdomKey* x) { x->blas_build = "build-id ffff"; }, "has changed", true},
        {[](WisdomKey* x) { x->backend = "reference"; }, "another backend", false},
        {[](WisdomKey* x) { x->threads = 1; }, "another thread count", false},
    };
    for (const Change& c : changes) {
        WisdomKey changed = k;
        c.apply(&changed);
        why.clear();
        bool stale = !c.stale;
        assert_null(find_wisdom(entries, changed, &why, &stale));
        if (why.find(c.says) == std::string::npos) fail_msg("'%s' does not say '%s'", why.c_str(), c.says);
        assert_int_equal(stale, c.stale);
    }
    assert_null(find_wisdom({}, k, &why));
    assert_true(why.find("no entries") != std::string::npos);
}

void put_replaces_the_same_key(void**) {
    std::vector<WisdomEntry> entries = {sample_entry()};
    WisdomEntry e = sample_entry();
    e.costs.phases.step_s_fp32 = 1e-6;
    put_wisdom(&entries, e);
    assert_int_equal(entries.size(), 1);
    assert_true(entries[0].costs.phases.step_s_fp32 == 1e-6);
    e.key.threads = 1;
    put_wisdom(&entries, e);
    assert_int_equal(entries.size(), 2);
}

void measured_constants_replace_only_theirs(void**) {
    const CostTable builtin = builtin_cost_table(kernels::Backend::avx512);
    const CostTable t = apply_wisdom(builtin, sample_entry());
    for (int i = 0; i < kCostFieldCount; ++i) {
        const double b = builtin.phases.*kCostFields[i].member, w = t.phases.*kCostFields[i].member;
        if (t.measured >> i & 1) assert_true(w == sample_entry().costs.phases.*kCostFields[i].member);
        else assert_true(w == b);
    }
    assert_true(t.phases.tiles == builtin.phases.tiles);
    // The measured real BLAS prices DGEMM; SGEMM keeps the single built-in rate.
    CostInput in;
    in.precision = kernels::Precision::fp64;
    in.m = 1000, in.n = 100, in.k = 10;
    in.products = 21;
    in.slices = 6;
    in.backend = kernels::Backend::avx512;
    in.threads = 2;
    const BlasTimeModel& m = sample_entry().costs.blas[1];
    const double want = m.fixed_s + (2.0 * 1000 * 100 * 10 / m.flops_s + 1000 * 100 * m.c_s + 1000 * 10 * m.a_s + 10 * 100 * m.b_s) / 2;
    assert_true(std::fabs(predict_cost(in, t).blas_s - want) <= 1e-12 * want);
    assert_true(predict_cost(in, builtin).blas_s == predict_cost(in).blas_s);  // nothing measured: as built in
    in.precision = kernels::Precision::fp32;
    assert_true(predict_cost(in, t).blas_s == 2.0 * 1000 * 100 * 10 / (builtin.phases.blas_flops_s_fp32 * 2));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(damaged_files_are_refused),
        cmocka_unit_test(keys_must_be_equal),
        cmocka_unit_test(put_replaces_the_same_key),
        cmocka_unit_test(measured_constants_replace_only_theirs),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

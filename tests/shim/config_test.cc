// Unit tests of the shim's parts that need no BLAS: configuration parsing, the log line
// format and the log path expansion.
#include <complex>  // before cmocka.h, whose fail() macro breaks <complex>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#include "shim/config.h"
#include "shim/config_warnings.h"
#include "shim/log.h"
#include "shim/outlook.h"

using namespace amxblas;

namespace {

std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
    auto it = g_env.find(name);
    return it == g_env.end() ? nullptr : it->second.c_str();
}

void defaults_when_unset(void**) {
    g_env.clear();
    const Settings s = read_settings(fake_env, 8);
    assert_true(s.fp32);
    assert_int_equal(s.fp64_products, 0);
    assert_true(s.fp64_engine == kernels::Fp64Engine::automatic);
    assert_int_equal(s.min_n, 256);
    assert_true(s.shapes == ShapeRule::automatic);
    assert_true(s.backend == BackendChoice::automatic);
    assert_int_equal(s.num_threads, 8);
    assert_int_equal(s.verbose, 0);
    assert_true(s.log_path.empty());
    assert_true(s.fallback.empty());
    assert_int_equal(s.summary_every_s, 0);
    assert_true(s.record_dir.empty());
    assert_false(s.record_all);
    assert_int_equal(s.record_max_bytes, 256u << 20);
}

void valid_values_are_taken(void**) {
    g_env = {{"AMXBLAS_FP32", "0"},           {"AMXBLAS_FP64_PRODUCTS", "15"},
             {"AMXBLAS_MIN_N", "64"},         {"AMXBLAS_SHAPES", "any"},
             {"AMXBLAS_BACKEND", "avx512"},   {"AMXBLAS_NUM_THREADS", "3"},
             {"AMXBLAS_VERBOSE", "2"},        {"AMXBLAS_LOG", "/tmp/x.%p"},
             {"AMXBLAS_FALLBACK", "/lib/libblas.so.3"}, {"AMXBLAS_MAX_WORKSPACE_MB", "2"},
             {"AMXBLAS_SUMMARY_EVERY", "60"},       {"AMXBLAS_RECORD", "/tmp/calls"},
             {"AMXBLAS_RECORD_ALL", "1"},           {"AMXBLAS_RECORD_MAX_MB", "3"}};
    const Settings s = read_settings(fake_env, 8);
    assert_false(s.fp32);
    assert_int_equal(s.fp64_products, 15);
    assert_int_equal(s.min_n, 64);
    assert_true(s.shapes == ShapeRule::any);
    assert_true(s.backend == BackendChoice::avx512);
    assert_int_equal(s.num_threads, 3);
    assert_int_equal(s.verbose, 2);
    assert_string_equal(s.log_path.c_str(), "/tmp/x.%p");
    assert_string_equal(s.fallback.c_str(), "/lib/libblas.so.3");
    assert_int_equal(s.workspace_cap_bytes, 2u << 20);
    assert_int_equal(s.summary_every_s, 60);
    assert_string_equal(s.record_dir.c_str(), "/tmp/calls");
    assert_true(s.record_all);
    assert_int_equal(s.record_max_bytes, 3u << 20);
}

void invalid_values_fall_back_to_defaults(void**) {
    g_env = {{"AMXBLAS_FP32", "maybe"},      {"AMXBLAS_FP64_PRODUCTS", "7"},
             {"AMXBLAS_MIN_N", "12x"},       {"AMXBLAS_SHAPES", "round"},
             {"AMXBLAS_BACKEND", "gpu"},     {"AMXBLAS_NUM_THREADS", "0"},
             {"AMXBLAS_VERBOSE", "3"},       {"OMP_NUM_THREADS", "5,2"},
             {"AMXBLAS_SUMMARY_EVERY", "-1"},
             {"AMXBLAS_RECORD_ALL", "2"},    {"AMXBLAS_RECORD_MAX_MB", "0"}};
    const Settings s = read_settings(fake_env, 8);
    assert_true(s.fp32);
    assert_int_equal(s.fp64_products, 0);
    assert_int_equal(s.min_n, 256);
    assert_true(s.shapes == ShapeRule::automatic);
    assert_true(s.backend == BackendChoice::automatic);
    assert_int_equal(s.num_threads, 5);  // AMXBLAS_NUM_THREADS invalid: OMP_NUM_THREADS
    assert_int_equal(s.verbose, 0);
    assert_int_equal(s.summary_every_s, 0);
    assert_false(s.record_all);
    assert_int_equal(s.record_max_bytes, 256u << 20);  // 0 is no cap: refused, as it records nothing
}

void omp_num_threads_is_the_second_choice(void**) {
    g_env = {{"OMP_NUM_THREADS", "6"}};
    assert_int_equal(read_settings(fake_env, 8).num_threads, 6);
    g_env = {{"OMP_NUM_THREADS", "6"}, {"AMXBLAS_NUM_THREADS", "2"}};
    assert_int_equal(read_settings(fake_env, 8).num_threads, 2);
    g_env = {{"OMP_NUM_THREADS", "lots"}};
    assert_int_equal(read_settings(fake_env, 8).num_threads, 8);
}

void every_fp64_product_count(void**) {
    for (const char* v : {"0", "6", "10", "15", "21", "28", "36"}) {
        g_env = {{"AMXBLAS_FP64_PRODUCTS", v}};
        assert_int_equal(read_settings(fake_env, 1).fp64_products, std::atoi(v));
    }
    g_env = {{"AMXBLAS_FP64_PRODUCTS", "auto"}, {"AMXBLAS_FP64_TOL", "4.5"}};
    Settings s = read_settings(fake_env, 1);
    assert_int_equal(s.fp64_products, -1);
    assert_true(s.fp64_tol == 4.5);
    for (const char* bad : {"0.0001", "0", "x", "", "1e16", "nan"}) {
        g_env = {{"AMXBLAS_FP64_TOL", bad}};
        assert_true(read_settings(fake_env, 1).fp64_tol == 1);
    }
    g_env = {{"AMXBLAS_FP64_PRODUCTS", "Auto"}};
    assert_int_equal(read_settings(fake_env, 1).fp64_products, 0);
}

// read_settings with stderr caught: the warnings it wrote, in *warnings.
Settings read_settings_warned(std::string* warnings) {
    std::FILE* tmp = std::tmpfile();
    assert_non_null(tmp);
    const int saved = dup(STDERR_FILENO);
    dup2(fileno(tmp), STDERR_FILENO);
    const Settings s = read_settings(fake_env, 1);
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::rewind(tmp);
    warnings->clear();
    char buf[512];
    while (std::fgets(buf, sizeof buf, tmp)) *warnings += buf;
    std::fclose(tmp);
    return s;
}

// AMXBLAS_FP64_ENGINE, read before AMXBLAS_FP64_PRODUCTS: it decides which counts are accepted.
void fp64_engine_and_its_counts(void**) {
    using kernels::Fp64Engine;
    const std::pair<const char*, Fp64Engine> engines[] = {
        {"auto", Fp64Engine::automatic}, {"bf16", Fp64Engine::bf16}, {"int8", Fp64Engine::int8}};
    for (const auto& [text, engine] : engines) {
        g_env = {{"AMXBLAS_FP64_ENGINE", text}};
        assert_true(read_settings(fake_env, 1).fp64_engine == engine);
    }
    std::string warned;
    for (const char* bad : {"INT8", "Auto", "", " int8", "fp64", "int4"}) {
        g_env = {{"AMXBLAS_FP64_ENGINE", bad}, {"AMXBLAS_FP64_PRODUCTS", "21"}};
        const Settings s = read_settings_warned(&warned);
        assert_true(s.fp64_engine == Fp64Engine::automatic);
        assert_int_equal(s.fp64_products, 21);  // the default engine's counts apply
        assert_string_equal(warned.c_str(), (std::string("amxblas: warning: AMXBLAS_FP64_ENGINE=\"") + bad +
                                             "\" is not valid (accepted: auto, int8 or bf16); using auto\n").c_str());
    }
    // int8: 0, the moduli 6 ... 24, or auto.
    for (int v = 0; v <= 16; ++v) {
        if (v >= 1 && v <= 5) continue;
        g_env = {{"AMXBLAS_FP64_ENGINE", "int8"}, {"AMXBLAS_FP64_PRODUCTS", std::to_string(v)}};
        assert_int_equal(read_settings(fake_env, 1).fp64_products, v);
    }
    g_env = {{"AMXBLAS_FP64_ENGINE", "int8"}, {"AMXBLAS_FP64_PRODUCTS", "auto"}};
    assert_int_equal(read_settings(fake_env, 1).fp64_products, kernels::kFp64Auto);
    for (const char* bad : {"5", "25", "28", "36", "1", "016x"}) {
        g_env = {{"AMXBLAS_FP64_ENGINE", "int8"}, {"AMXBLAS_FP64_PRODUCTS", bad}};
        const Settings s = read_settings_warned(&warned);
        assert_int_equal(s.fp64_products, 0);
        assert_true(s.fp64_engine == Fp64Engine::int8);
        assert_string_equal(warned.c_str(), (std::string("amxblas: warning: AMXBLAS_FP64_PRODUCTS=\"") + bad +
                                             "\" is not valid (accepted with AMXBLAS_FP64_ENGINE=int8: 0, 6, 7, 8, 9, "
                                             "10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 or auto); using 0\n").c_str());
    }
    // bf16 and auto: the BF16 product counts, as before the INT8 engine; the warning names the engine.
    for (const char* engine : {"bf16", "auto"}) {
        for (const char* v : {"0", "6", "10", "15", "21", "28", "36"}) {
            g_env = {{"AMXBLAS_FP64_ENGINE", engine}, {"AMXBLAS_FP64_PRODUCTS", v}};
            assert_int_equal(read_settings(fake_env, 1).fp64_products, std::atoi(v));
        }
        g_env = {{"AMXBLAS_FP64_ENGINE", engine}, {"AMXBLAS_FP64_PRODUCTS", "12"}};
        const Settings s = read_settings_warned(&warned);
        assert_int_equal(s.fp64_products, 0);
        assert_string_equal(warned.c_str(), (std::string("amxblas: warning: AMXBLAS_FP64_PRODUCTS=\"12\" is not valid "
                                                         "(accepted with AMXBLAS_FP64_ENGINE=") + engine +
                                             ": 0, 6, 10, 15, 21, 28, 36 or auto); using 0\n").c_str());
    }
}

// Wherever 0 and 1 are accepted, so are on/off, yes/no and true/false in any case, as the
// launcher's --fp32 on|off (issue 48, item 5): AMXBLAS_FP32=off meant routing off, and kept it on.
void booleans_in_words(void**) {
    const std::pair<const char*, bool> words[] = {
        {"1", true},     {"0", false},   {"on", true},  {"off", false}, {"yes", true}, {"no", false},
        {"true", true},  {"false", false}, {"ON", true}, {"Off", false}, {"YES", true}, {"No", false},
        {"True", true},  {"FALSE", false}};
    for (const auto& [text, value] : words) {
        g_env = {{"AMXBLAS_FP32", text}, {"AMXBLAS_RECORD_ALL", text}};
        const Settings s = read_settings(fake_env, 1);
        assert_true(s.fp32 == value);
        assert_true(s.record_all == value);
    }
    std::string warned;
    for (const char* bad : {"2", "", " on", "off ", "y", "n", "enable", "0x1", "o"}) {
        g_env = {{"AMXBLAS_FP32", bad}};
        const Settings s = read_settings_warned(&warned);
        assert_true(s.fp32);
        assert_string_equal(warned.c_str(), (std::string("amxblas: warning: AMXBLAS_FP32=\"") + bad +
                                             "\" is not valid (accepted: 1, on, yes or true; 0, off, no or false; "
                                             "in any case); using 1\n").c_str());
    }
}

void call_line_format(void**) {
    CallRecord r{};
    r.routine = Routine::dgemm_;
    r.layout = "col";
    r.transa = 'N';
    r.transb = 'T';
    r.m = r.n = r.k = r.lda = r.ldb = r.ldc = 2048;
    r.route = Route::amx_fp64_10;
    r.backend = "amx";
    r.threads = 2;
    r.seconds = 1834e-6;
    char line[640];
    format_call_line(r, line, sizeof line);
    assert_string_equal(line,
                        "amxblas: routine=dgemm_ layout=col transa=N transb=T m=2048 n=2048 "
                        "k=2048 lda=2048 ldb=2048 ldc=2048 route=fp64-10 backend=amx "
                        "threads=2 engine=bf16 products=10 time_us=1834.0 gflops=9367.43");
    // Every routed FP64 line says its engine and count: INT8's moduli are the record's.
    r.route = Route::amx_fp64_int8;
    r.fp64_products = 12;
    format_call_line(r, line, sizeof line);
    assert_non_null(std::strstr(line, " route=fp64-int8 backend=amx threads=2 engine=int8 products=12 time_us=1834.0 "));
    // Auto: the count picked, then the certificate's margin and the repairs, for either engine.
    r.fp64_auto = true;
    r.fp64_products = 16;
    r.fp64_margin = 3.25;
    r.fp64_repaired = 2;
    format_call_line(r, line, sizeof line);
    assert_non_null(std::strstr(line, " route=fp64-int8 backend=amx threads=2 engine=int8 products=16 margin=3.25 "
                                      "repaired=2 time_us=1834.0 "));
    r.route = Route::amx_fp64_21;
    r.fp64_products = 21;
    r.fp64_repaired = 0;
    r.predicted_speedup = 1.5;
    format_call_line(r, line, sizeof line);
    assert_non_null(std::strstr(line, " route=fp64-21 backend=amx threads=2 engine=bf16 products=21 margin=3.25 "
                                      "repaired=0 predicted=1.50x time_us=1834.0 "));
    r.fp64_auto = false;
    r.predicted_speedup = 0;
    r.route = Route::forward;
    r.reason = "shape:not-square";
    r.m = 10;
    r.seconds = 0;
    format_call_line(r, line, sizeof line);
    assert_non_null(std::strstr(line, " route=forward reason=shape:not-square time_us=0.0 "
                                      "gflops=0.00"));
    r.route = Route::amx_fp32;
    r.routine = Routine::cblas_sgemm;
    r.note = "threads:in-parallel-region";
    r.threads = 1;
    format_call_line(r, line, sizeof line);
    assert_non_null(std::strstr(line, "routine=cblas_sgemm "));
    assert_non_null(std::strstr(line, "threads=1 note=threads:in-parallel-region time_us="));
}

// One rule for every numeric variable: decimal digits (and for AMXBLAS_FP64_TOL a decimal
// point and exponent), nothing else: no sign, no space on either side, no hexadecimal.
void numbers_are_plain_decimal(void**) {
    for (const char* bad : {" 21", "21 ", "+21", "-21", "0x15", "21x", "２１", "", " "}) {
        g_env = {{"AMXBLAS_FP64_PRODUCTS", bad}, {"AMXBLAS_MIN_N", bad}, {"AMXBLAS_NUM_THREADS", bad},
                 {"AMXBLAS_SUMMARY_EVERY", bad}, {"AMXBLAS_MAX_WORKSPACE_MB", bad},
                 {"AMXBLAS_RECORD_MAX_MB", bad}};
        const Settings s = read_settings(fake_env, 8);
        assert_int_equal(s.fp64_products, 0);
        assert_int_equal(s.min_n, 256);
        assert_int_equal(s.num_threads, 8);
        assert_int_equal(s.summary_every_s, 0);
        assert_int_equal(s.workspace_cap_bytes, 0);
        assert_int_equal(s.record_max_bytes, 256u << 20);
    }
    g_env = {{"AMXBLAS_FP64_PRODUCTS", "021"}, {"AMXBLAS_MIN_N", "0100"}};
    assert_int_equal(read_settings(fake_env, 8).fp64_products, 21);  // decimal, not octal
    assert_int_equal(read_settings(fake_env, 8).min_n, 100);
    g_env = {{"AMXBLAS_MIN_N", "99999999999999999999999"}};
    assert_int_equal(read_settings(fake_env, 8).min_n, 256);
    for (const char* bad : {"0x10", " 4", "4 ", "+4", "4.5.1", "1e", "e5", ".", "inf", "nan", "4,5", "1e+"}) {
        g_env = {{"AMXBLAS_FP64_TOL", bad}};
        assert_true(read_settings(fake_env, 1).fp64_tol == 1);
    }
    const std::pair<const char*, double> good[] = {{"16", 16}, {"4.5", 4.5}, {".5", 0.5}, {"2.", 2},
                                                   {"1e3", 1e3}, {"1E-2", 1e-2}, {"2.5e+1", 25}};
    for (const auto& [text, value] : good) {
        g_env = {{"AMXBLAS_FP64_TOL", text}};
        assert_true(read_settings(fake_env, 1).fp64_tol == value);
    }
    // OMP_NUM_THREADS is OpenMP's: spaces around an entry are allowed, as the runtime allows them.
    g_env = {{"OMP_NUM_THREADS", " 3 ,2"}};
    assert_int_equal(read_settings(fake_env, 8).num_threads, 3);
}

Hardware machine(bool amx, bool avx512) {
    Hardware h;
    h.set_runs(kernels::Backend::amx, amx);
    h.set_runs(kernels::Backend::avx512, avx512);
    h.set_runs(kernels::Backend::reference, true);
    h.cores = 4;
    return h;
}

// Said once up front: nothing will be routed here, why, and what routes anyway.
void routing_outlook_without_amx(void**) {
    Settings s;  // the defaults: FP32 on, FP64 off, backend auto
    std::string line = routing_outlook(s, machine(false, false));
    assert_non_null(std::strstr(line.c_str(), "note: no GEMM will be routed with these settings on this machine: "
                                              "AMXBLAS_BACKEND=auto uses only the amx backend, which this CPU "
                                              "cannot run (backend:no-amx)"));
    assert_non_null(std::strstr(line.c_str(), "AMXBLAS_BACKEND=reference (portable, slow)"));
    assert_null(std::strstr(line.c_str(), "AMXBLAS_BACKEND=avx512"));
    // Every setting a route needs here, in the one note (issue 48): the backends that run here
    // route nothing under the cost model, so the shape rule is named too.
    assert_non_null(std::strstr(line.c_str(), "AMXBLAS_SHAPES=square or any"));
    assert_non_null(std::strstr(line.c_str(), "DGEMM and ZGEMM also need AMXBLAS_FP64_PRODUCTS=6, 10, 15, 21, 28, 36, or auto"));
    assert_non_null(std::strstr(line.c_str(), "(amxblas-run: --backend, --shapes, --fp64-products)"));
    line = routing_outlook(s, machine(false, true));
    assert_non_null(std::strstr(line.c_str(), "set AMXBLAS_BACKEND=avx512 or AMXBLAS_BACKEND=reference"));
    s.fp64_products = 21;
    assert_null(std::strstr(routing_outlook(s, machine(false, true)).c_str(), "DGEMM"));
    s.backend = BackendChoice::avx512;
    line = routing_outlook(s, machine(false, false));
    assert_non_null(std::strstr(line.c_str(), "AMXBLAS_BACKEND=avx512 is set, which this CPU cannot run "
                                              "(backend:no-avx512-bf16)"));
    // Something can be routed: nothing to say.
    assert_string_equal(routing_outlook(Settings{}, machine(true, false)).c_str(), "");
    // A backend that runs here, which the cost model (AMXBLAS_SHAPES=auto, the default) finds
    // no gain on: said too, with the way round it; with another shape rule, nothing to say.
    s.backend = BackendChoice::reference;
    line = routing_outlook(s, machine(false, false));
    assert_non_null(std::strstr(line.c_str(), "AMXBLAS_SHAPES=auto routes only calls the cost model predicts to "
                                              "gain, and on the reference backend it predicts none"));
    assert_non_null(std::strstr(line.c_str(), "set AMXBLAS_SHAPES=square or any"));
    assert_null(std::strstr(line.c_str(), "DGEMM"));  // AMXBLAS_FP64_PRODUCTS=21, set above
    s.fp64_products = 0;
    line = routing_outlook(s, machine(false, false));
    assert_non_null(std::strstr(line.c_str(), "set AMXBLAS_SHAPES=square or any; DGEMM and ZGEMM also need "
                                              "AMXBLAS_FP64_PRODUCTS="));
    s.fp64_products = 21;
    s.shapes = ShapeRule::square;
    assert_string_equal(routing_outlook(s, machine(false, false)).c_str(), "");
    s.shapes = ShapeRule::any;
    assert_string_equal(routing_outlook(s, machine(false, false)).c_str(), "");
    // Both precisions off: nothing is routed, whatever the machine.
    s.fp32 = false;
    s.fp64_products = 0;
    line = routing_outlook(s, machine(true, true));
    assert_non_null(std::strstr(line.c_str(), "AMXBLAS_FP32=0 and AMXBLAS_FP64_PRODUCTS=0 route neither precision"));
}

// The settings a note names, applied to env: the first value it gives each AMXBLAS_* variable
// after "To run the emulation anyway" (AMXBLAS_BACKEND=avx512 or AMXBLAS_BACKEND=reference:
// avx512; AMXBLAS_FP64_PRODUCTS=6, 10, ...: 6).
void apply_note(const std::string& note, std::map<std::string, std::string>* env) {
    const std::size_t advice = note.find("To run the emulation anyway");
    assert_true(advice != std::string::npos);
    std::map<std::string, std::string> named;
    for (std::size_t at = note.find("AMXBLAS_", advice); at != std::string::npos; at = note.find("AMXBLAS_", at + 1)) {
        const std::size_t eq = note.find('=', at);
        if (eq == std::string::npos || note.find_first_of(" ,;()", at) < eq) continue;
        const std::size_t end = note.find_first_of(" ,;()", eq);
        named.emplace(note.substr(at, eq - at), note.substr(eq + 1, end - eq - 1));  // the first value
    }
    for (const auto& [name, value] : named) (*env)[name] = value;
}

// A note names every setting a route needs here (issue 48, item 2): whatever the settings and
// the machine, doing what it says routes something, and says nothing more, not a second note.
void following_the_note_routes(void**) {
    const std::map<std::string, std::string> starts[] = {
        {},
        {{"AMXBLAS_BACKEND", "avx512"}},
        {{"AMXBLAS_BACKEND", "reference"}},
        {{"AMXBLAS_BACKEND", "reference"}, {"AMXBLAS_FP64_PRODUCTS", "21"}},
        {{"AMXBLAS_FP32", "0"}},
        {{"AMXBLAS_FP32", "0"}, {"AMXBLAS_BACKEND", "reference"}},
        {{"AMXBLAS_FP64_PRODUCTS", "auto"}, {"AMXBLAS_SHAPES", "square"}},
    };
    int notes = 0;
    for (const bool amx : {false, true}) {
        for (const bool avx512 : {false, true}) {
            for (const auto& start : starts) {
                g_env = start;
                const std::string note = routing_outlook(read_settings(fake_env, 4), machine(amx, avx512));
                if (note.empty()) continue;
                ++notes;
                apply_note(note, &g_env);
                const std::string second = routing_outlook(read_settings(fake_env, 4), machine(amx, avx512));
                if (!second.empty()) print_error("after the note %s\nthe note is %s\n", note.c_str(), second.c_str());
                assert_string_equal(second.c_str(), "");
            }
        }
    }
    assert_true(notes >= 12);
}

// AMXBLAS_LOG asks for a log, as the launcher's --log does: without AMXBLAS_VERBOSE it writes one
// line per call there (issue 48, item 4); an AMXBLAS_VERBOSE given is kept, 0 included.
void log_turns_logging_on(void**) {
    g_env = {{"AMXBLAS_LOG", "run.log"}};
    assert_int_equal(read_settings(fake_env, 1).verbose, 2);
    g_env = {{"AMXBLAS_LOG", "run.log"}, {"AMXBLAS_VERBOSE", "1"}};
    assert_int_equal(read_settings(fake_env, 1).verbose, 1);
    g_env = {{"AMXBLAS_LOG", "run.log"}, {"AMXBLAS_VERBOSE", "0"}};
    assert_int_equal(read_settings(fake_env, 1).verbose, 0);
    g_env = {{"AMXBLAS_LOG", ""}};  // empty: stderr, as unset
    assert_int_equal(read_settings(fake_env, 1).verbose, 0);
    std::string warned;
    g_env = {{"AMXBLAS_LOG", "run.log"}, {"AMXBLAS_VERBOSE", "3"}};
    assert_int_equal(read_settings_warned(&warned).verbose, 2);
    assert_string_equal(warned.c_str(), "amxblas: warning: AMXBLAS_VERBOSE=\"3\" is not valid (accepted: 0, 1 or 2); "
                                        "using 2 (AMXBLAS_LOG is set)\n");
}

// The names of the AMXBLAS_* variables read_settings() looks up.
std::set<std::string> g_asked;
const char* asking_env(const char* name) {
    if (!std::strncmp(name, "AMXBLAS_", 8)) g_asked.insert(name);
    return nullptr;
}

// shim/variables.def's library rows are exactly the variables read_settings() reads, and the
// rows of docs/configuration.md's table: a variable it reads is never called unknown, and one
// the page documents is read.
void variables_table_is_what_is_read(void**) {
    g_asked.clear();
    read_settings(asking_env, 1);
    std::set<std::string> rows;
#define AMXBLAS_VARIABLE(name, reader) \
    if (std::string(#reader) == "library") rows.insert(#name);
#include "shim/variables.def"
#undef AMXBLAS_VARIABLE
    assert_true(rows == g_asked);
    std::ifstream page(AMXBLAS_CONFIGURATION_MD);
    assert_true(page.good());
    std::set<std::string> documented;
    for (std::string line; std::getline(page, line);)
        if (line.rfind("| `AMXBLAS_", 0) == 0) documented.insert(line.substr(3, line.find('`', 3) - 3));
    for (const std::string& name : documented) if (!rows.count(name)) print_error("documented, not read: %s\n", name.c_str());
    for (const std::string& name : rows) if (!documented.count(name)) print_error("read, not documented: %s\n", name.c_str());
    assert_true(rows == documented);
}

// configuration_warnings() for an environment given as NAME=VALUE strings.
std::vector<std::string> warnings_for(std::vector<std::string> environment, const Hardware& hw) {
    g_env.clear();
    for (const std::string& e : environment) g_env[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
    std::vector<const char*> envp;
    for (const std::string& e : environment) envp.push_back(e.c_str());
    envp.push_back(nullptr);
    return configuration_warnings(envp.data(), read_settings(fake_env, 4), hw);
}

// A mistake that would otherwise say nothing gets one line, whatever the verbosity (issue 48,
// item 4): a variable of the prefix that nothing reads (with the nearest known name), AMXBLAS_LOG
// with logging turned off, a backend asked for by name that this machine cannot run.
void configuration_warnings_for_silent_mistakes(void**) {
    const Hardware bare = machine(false, false);
    std::vector<std::string> w = warnings_for({"AMXBLAS_FP64_PRODUCT=21", "PATH=/bin"}, bare);
    assert_int_equal(w.size(), 1);
    assert_string_equal(w[0].c_str(), "warning: AMXBLAS_FP64_PRODUCT is not a variable of amxblas and is ignored; "
                                      "did you mean AMXBLAS_FP64_PRODUCTS?");
    w = warnings_for({"amxblas_verbose=2"}, bare);
    assert_int_equal(w.size(), 1);
    assert_non_null(std::strstr(w[0].c_str(), "amxblas_verbose is not a variable of amxblas and is ignored; "
                                              "did you mean AMXBLAS_VERBOSE?"));
    w = warnings_for({"AMXBLAS_BACKNED=reference", "AMXBLAS_MINN=64"}, bare);
    assert_int_equal(w.size(), 2);
    assert_non_null(std::strstr(w[0].c_str(), "did you mean AMXBLAS_BACKEND?"));
    assert_non_null(std::strstr(w[1].c_str(), "did you mean AMXBLAS_MIN_N?"));
    // The nearest name suggested is one a user sets to configure amxblas, never a packaging one.
    w = warnings_for({"AMXBLAS_DIRS=/opt"}, bare);
    assert_int_equal(w.size(), 1);
    assert_null(std::strstr(w[0].c_str(), "AMXBLAS_DIR?"));
    // Read by other tools (the launcher, the tests, package managers), or by the library: quiet.
    w = warnings_for({"AMXBLAS_LIBRARY=/x.so", "AMXBLAS_EXPLAIN=/x", "AMXBLAS_TEST_BACKEND=reference",
                      "AMXBLAS_ROOT=/opt/amxblas", "AMXBLAS_FP32=1", "AMXBLAS_BACKEND=reference",
                      "AMXBLAS_LOG=run.log", "OMP_NUM_THREADS=2"},
                     bare);
    assert_int_equal(w.size(), 0);
    // AMXBLAS_LOG with AMXBLAS_VERBOSE=0: nothing would be written to it.
    w = warnings_for({"AMXBLAS_LOG=run.log", "AMXBLAS_VERBOSE=0"}, bare);
    assert_int_equal(w.size(), 1);
    assert_string_equal(w[0].c_str(), "warning: AMXBLAS_LOG=run.log is set, but AMXBLAS_VERBOSE=0 turns logging off: "
                                      "nothing is written there (leave AMXBLAS_VERBOSE unset, or set it to 1 or 2)");
    // A backend asked for by name that this CPU cannot run; auto is no request.
    w = warnings_for({"AMXBLAS_BACKEND=amx"}, bare);
    assert_int_equal(w.size(), 1);
    assert_string_equal(w[0].c_str(), "warning: AMXBLAS_BACKEND=amx asks for a backend this CPU cannot run "
                                      "(backend:no-amx): no GEMM is routed; AMXBLAS_BACKEND=reference (portable, slow) runs here");
    w = warnings_for({"AMXBLAS_BACKEND=avx512"}, machine(false, false));
    assert_int_equal(w.size(), 1);
    assert_non_null(std::strstr(w[0].c_str(), "(backend:no-avx512-bf16)"));
    w = warnings_for({"AMXBLAS_BACKEND=amx"}, machine(false, true));
    assert_non_null(std::strstr(w[0].c_str(), "; AMXBLAS_BACKEND=avx512 or AMXBLAS_BACKEND=reference (portable, slow) runs here"));
    assert_int_equal(warnings_for({"AMXBLAS_BACKEND=auto"}, bare).size(), 0);
    assert_int_equal(warnings_for({"AMXBLAS_BACKEND=amx"}, machine(true, false)).size(), 0);
    Hardware harness = bare;  // the AMX harness runs the amx backend by name
    harness.amx_emulator = true;
    assert_int_equal(warnings_for({"AMXBLAS_BACKEND=amx"}, harness).size(), 0);
}

// K = 0 or ALPHA = 0 forms no product: no GF/s from 2mnk for it.
void beta_scale_line_has_no_rate(void**) {
    CallRecord r{};
    r.routine = Routine::dgemm_;
    r.layout = "col";
    r.transa = r.transb = 'N';
    r.m = r.n = r.k = r.lda = r.ldb = r.ldc = 1000;
    r.route = Route::beta_scale;
    r.reason = "alpha:zero";
    r.seconds = 1e-3;
    char line[640];
    format_call_line(r, line, sizeof line);
    assert_non_null(std::strstr(line, " route=beta-scale reason=alpha:zero time_us=1000.0 gflops=0.00"));
}

void log_path_expansion(void**) {
    char out[256];
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    expand_log_path("/tmp/log.%r.txt", out, sizeof out);
    assert_string_equal(out, "/tmp/log.3.txt");
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("SLURM_PROCID", "7", 1);
    expand_log_path("r%r", out, sizeof out);
    assert_string_equal(out, "r7");
    unsetenv("SLURM_PROCID");
    expand_log_path("r%r-%%", out, sizeof out);
    assert_string_equal(out, "r0-%%");
    expand_log_path("p%p", out, sizeof out);
    assert_int_equal(std::atol(out + 1), static_cast<long>(getpid()));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_when_unset),
        cmocka_unit_test(valid_values_are_taken),
        cmocka_unit_test(invalid_values_fall_back_to_defaults),
        cmocka_unit_test(omp_num_threads_is_the_second_choice),
        cmocka_unit_test(every_fp64_product_count),
        cmocka_unit_test(fp64_engine_and_its_counts),
        cmocka_unit_test(booleans_in_words),
        cmocka_unit_test(call_line_format),
        cmocka_unit_test(numbers_are_plain_decimal),
        cmocka_unit_test(routing_outlook_without_amx),
        cmocka_unit_test(following_the_note_routes),
        cmocka_unit_test(log_turns_logging_on),
        cmocka_unit_test(variables_table_is_what_is_read),
        cmocka_unit_test(configuration_warnings_for_silent_mistakes),
        cmocka_unit_test(beta_scale_line_has_no_rate),
        cmocka_unit_test(log_path_expansion),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

#include "shim/config.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/common/engine_table.h"
#include "kernels/common/variants.h"
#include "kernels/isa/backend.h"
#include "shim/hardware.h"
#include "shim/messages.h"

namespace amxblas {

namespace {

// "warning: VAR="VALUE" is not valid (ACCEPTED); using USED", to *sink, or at once on stderr
// when sink is null.
void warn_invalid(std::vector<std::string>* sink, const char* var, const char* value, const char* accepted,
                  const char* used) {
    std::string msg = std::string("warning: ") + var + "=\"" + value + "\" is not valid (" +
                      accepted + "); using " + used;
    if (sink) sink->push_back(msg);
    else warning_message(msg.c_str());
}

// The one rule for every numeric AMXBLAS_* variable: the value is a plain decimal number and
// nothing else. No sign, no space before or after it, no hexadecimal (strtol and strtod took
// " 21" and "+5", rejected "21 " and read 0x10 as 16), no inf or nan. Both parsers are
// independent of the program's locale.
bool all_digits(const char* s, const char* end) {
    if (s == end) return false;
    for (; s < end; ++s)
        if (*s < '0' || *s > '9') return false;
    return true;
}

// Digits only, in [lo, hi].
bool parse_int(const char* s, long lo, long hi, long* out) {
    if (!s || !all_digits(s, s + std::strlen(s))) return false;
    long v = 0;
    for (; *s; ++s) {
        v = v * 10 + (*s - '0');
        if (v > hi) return false;  // also stops any overflow
    }
    if (v < lo) return false;
    *out = v;
    return true;
}

// DIGITS[.DIGITS] or .DIGITS, then optionally e or E, an optional sign and DIGITS.
bool parse_decimal(const char* s, double* out) {
    if (!s) return false;
    const char* end = s + std::strlen(s);
    const char* e = s;
    while (e < end && *e != 'e' && *e != 'E') ++e;
    const char* dot = std::find(s, e, '.');
    const bool mantissa = dot == e ? all_digits(s, e)
                                   : (dot > s || e > dot + 1) && (dot == s || all_digits(s, dot)) &&
                                         (e == dot + 1 || all_digits(dot + 1, e));
    if (!mantissa) return false;
    if (e < end) {
        const char* x = e + 1;
        if (x < end && (*x == '+' || *x == '-')) ++x;
        if (!all_digits(x, end)) return false;
    }
    const std::from_chars_result r = std::from_chars(s, end, *out, std::chars_format::general);
    return r.ec == std::errc() && r.ptr == end;
}

// A switch: 1, on, yes or true; 0, off, no or false; in any case (the launcher's --fp32 takes
// the same words). Nothing else: no spaces, no abbreviations.
constexpr const char* kSwitchAccepted = "accepted: 1, on, yes or true; 0, off, no or false; in any case";
bool parse_switch(const char* s, bool* out) {
    for (const char* word : {"1", "on", "yes", "true"}) {
        if (strcasecmp(s, word) == 0) {
            *out = true;
            return true;
        }
    }
    for (const char* word : {"0", "off", "no", "false"}) {
        if (strcasecmp(s, word) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

// OMP_NUM_THREADS may be a list ("4,2"): its first entry is the outer level. It is OpenMP's
// variable, parsed as the OpenMP runtime does: spaces around the entry are allowed.
bool parse_omp_threads(const char* s, long* out) {
    if (!s || !*s) return false;
    std::string first(s, std::strcspn(s, ","));
    const std::size_t b = first.find_first_not_of(" \t");
    const std::size_t e = first.find_last_not_of(" \t");
    if (b == std::string::npos) return false;
    return parse_int(first.substr(b, e - b + 1).c_str(), 1, 1 << 16, out);
}

// "a, b or c" from a list of choices.
std::string one_of(const std::string* choices, int count) {
    std::string s;
    for (int i = 0; i < count; ++i) s += (i == 0 ? "" : i + 1 == count ? " or " : ", ") + choices[i];
    return s;
}

// AMXBLAS_FP64_ENGINE: auto, or an engine of kernels/common/engines.def by name.
std::string fp64_engine_choices() {
    std::string choices[kernels::kFp64EngineCount + 1] = {"auto"};
    for (int e = 0; e < kernels::kFp64EngineCount; ++e) choices[e + 1] = kernels::kFp64Engines[e].name;
    return one_of(choices, kernels::kFp64EngineCount + 1);
}

// AMXBLAS_FP64_PRODUCTS under an engine: 0, a fixed count the engine runs
// (kernels/common/engines.def: under int8 the moduli it has a basis for, under bf16 and auto the
// product counts of the FP64 variants of kernels/common/variants.def), or auto.
bool fp64_count_accepted(kernels::Fp64Engine engine, long v) {
    return v == 0 || (v <= kernels::kFp64MaxCount && kernels::fp64_count_accepted(engine, static_cast<int>(v)));
}

// The accepted AMXBLAS_FP64_PRODUCTS values for the engine in force, for its warning.
std::string fp64_products_choices(kernels::Fp64Engine engine) {
    std::string choices[kernels::kFp64MaxCount + 2] = {"0"};
    int n = 1;
    for (int v = 1; v <= kernels::kFp64MaxCount; ++v)
        if (fp64_count_accepted(engine, v)) choices[n++] = std::to_string(v);
    choices[n++] = "auto";
    return std::string("accepted with AMXBLAS_FP64_ENGINE=") + kernels::fp64_engine_name(engine) + ": " +
           one_of(choices, n);
}

// AMXBLAS_BACKEND: auto, or a backend of kernels/common/backends.def by name.
std::string backend_choices() {
    std::string choices[kernels::kBackendCount + 1] = {"auto"};
    int n = 1;
    for (kernels::Backend b : kernels::kAllBackends) choices[n++] = kernels::backend_name(b);
    return one_of(choices, n);
}

}  // namespace

Settings read_settings(EnvLookup env, int cores, std::vector<std::string>* warnings) {
    auto warn = [warnings](const char* var, const char* value, const char* accepted, const char* used) {
        warn_invalid(warnings, var, value, accepted, used);
    };
    Settings s;
    s.num_threads = cores > 0 ? cores : 1;
    long v;

    if (const char* x = env("AMXBLAS_FP32"); x && !parse_switch(x, &s.fp32))
        warn("AMXBLAS_FP32", x, kSwitchAccepted, "1");
    // The engine first: it decides which counts AMXBLAS_FP64_PRODUCTS accepts.
    if (const char* x = env("AMXBLAS_FP64_ENGINE")) {
        if (!kernels::parse_fp64_engine(x, &s.fp64_engine))
            warn("AMXBLAS_FP64_ENGINE", x, ("accepted: " + fp64_engine_choices()).c_str(), "auto");
    }
    if (const char* x = env("AMXBLAS_FP64_PRODUCTS")) {
        if (!std::strcmp(x, "auto"))
            s.fp64_products = kernels::kFp64Auto;
        else if (parse_int(x, 0, kernels::kFp64MaxCount, &v) && fp64_count_accepted(s.fp64_engine, v))
            s.fp64_products = static_cast<int>(v);
        else
            warn("AMXBLAS_FP64_PRODUCTS", x, fp64_products_choices(s.fp64_engine).c_str(), "0");
    }
    if (const char* x = env("AMXBLAS_FP64_TOL")) {
        double t = 0;
        if (parse_decimal(x, &t) && t >= 1e-3 && t <= 1e15)
            s.fp64_tol = t;
        else
            warn("AMXBLAS_FP64_TOL", x, "accepted: a decimal number from 0.001 to 1e15", "1");
    }
    if (const char* x = env("AMXBLAS_MIN_N")) {
        if (parse_int(x, 1, 1L << 30, &v)) s.min_n = static_cast<int>(v);
        else warn("AMXBLAS_MIN_N", x, "accepted: an integer >= 1, digits only", "256");
    }
    if (const char* x = env("AMXBLAS_SHAPES")) {
        if (!std::strcmp(x, "square")) s.shapes = ShapeRule::square;
        else if (!std::strcmp(x, "any")) s.shapes = ShapeRule::any;
        else if (!std::strcmp(x, "auto")) s.shapes = ShapeRule::automatic;
        else warn("AMXBLAS_SHAPES", x, "accepted: auto, square or any", "auto");
    }
    if (const char* x = env("AMXBLAS_BACKEND")) {
        kernels::Backend b;
        if (!std::strcmp(x, "auto")) s.backend = BackendChoice::automatic;
        else if (kernels::parse_backend(x, &b)) s.backend = static_cast<BackendChoice>(static_cast<int>(b) + 1);
        else warn("AMXBLAS_BACKEND", x, ("accepted: " + backend_choices()).c_str(), "auto");
    }
    const char* threads = env("AMXBLAS_NUM_THREADS");
    if (threads) {
        if (parse_int(threads, 1, 1 << 16, &v)) s.num_threads = static_cast<int>(v);
        else warn("AMXBLAS_NUM_THREADS", threads, "accepted: an integer >= 1, digits only",
                          "OMP_NUM_THREADS, else all cores");
    }
    if (!threads || !parse_int(threads, 1, 1 << 16, &v)) {
        if (const char* omp = env("OMP_NUM_THREADS"); omp && parse_omp_threads(omp, &v))
            s.num_threads = static_cast<int>(v);
    }
    // AMXBLAS_LOG asks for a log, as the launcher's --log does: without AMXBLAS_VERBOSE, one
    // line per call is written there (an AMXBLAS_VERBOSE given, 0 included, is kept).
    if (const char* x = env("AMXBLAS_LOG")) s.log_path = x;
    if (!s.log_path.empty()) s.verbose = 2;
    if (const char* x = env("AMXBLAS_VERBOSE")) {
        if (parse_int(x, 0, 2, &v)) s.verbose = static_cast<int>(v);
        else warn("AMXBLAS_VERBOSE", x, "accepted: 0, 1 or 2", s.verbose ? "2 (AMXBLAS_LOG is set)" : "0");
    }
    if (const char* x = env("AMXBLAS_SUMMARY_EVERY")) {
        if (parse_int(x, 0, 1L << 30, &v)) s.summary_every_s = static_cast<int>(v);
        else warn("AMXBLAS_SUMMARY_EVERY", x, "accepted: an integer >= 0 (seconds), digits only", "0 (at exit only)");
    }
    if (const char* x = env("AMXBLAS_FALLBACK")) s.fallback = x;
    if (const char* x = env("AMXBLAS_MAX_WORKSPACE_MB")) {
        if (parse_int(x, 0, 1L << 40, &v)) s.workspace_cap_bytes = static_cast<size_t>(v) << 20;
        else warn("AMXBLAS_MAX_WORKSPACE_MB", x, "accepted: an integer >= 0, digits only", "0 (no cap)");
    }
    if (const char* x = env("AMXBLAS_RECORD")) s.record_dir = x;
    if (const char* x = env("AMXBLAS_WISDOM")) s.wisdom = x;
    if (const char* x = env("AMXBLAS_RECORD_ALL"); x && !parse_switch(x, &s.record_all))
        warn("AMXBLAS_RECORD_ALL", x, kSwitchAccepted, "0");
    if (const char* x = env("AMXBLAS_RECORD_MAX_MB")) {
        // At least 1: a cap of 0 would record nothing, which leaving AMXBLAS_RECORD unset says.
        if (parse_int(x, 1, 1L << 30, &v)) s.record_max_bytes = static_cast<size_t>(v) << 20;
        else warn("AMXBLAS_RECORD_MAX_MB", x, "accepted: an integer from 1 to 1073741824, digits only", "256");
    }
    return s;
}

}  // namespace amxblas

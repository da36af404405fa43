#include "shim/config.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "kernels/common/fp_environment.h"
#include "kernels/common/variants.h"
#include "kernels/driver/emulated_gemm.h"
#include "kernels/int8/crt_basis.h"
#include "shim/hardware.h"
#include "shim/messages.h"

namespace amxblas {

namespace {

void warn_invalid(const char* var, const char* value, const char* accepted,
                  const char* used) {
    std::string msg = std::string("warning: ") + var + "=\"" + value + "\" is not valid (" +
                      accepted + "); using " + used;
    warning_message(msg.c_str());
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

// AMXBLAS_FP64_ENGINE's values, in the order of kernels::Fp64Engine.
constexpr const char* kFp64EngineNames[] = {"bf16", "int8", "auto"};
static_assert(static_cast<int>(kernels::Fp64Engine::bf16) == 0 && static_cast<int>(kernels::Fp64Engine::int8) == 1 &&
                  static_cast<int>(kernels::Fp64Engine::automatic) == 2,
              "kFp64EngineNames follows kernels::Fp64Engine");

// AMXBLAS_FP64_PRODUCTS under the int8 engine: 0, a count of moduli the INT8 engine has a basis
// for, or auto. Under bf16 and auto: 0, the product count of an FP64 variant
// (kernels/common/variants.def), or auto.
bool fp64_count_accepted(kernels::Fp64Engine engine, long v) {
    if (v == 0) return true;
    if (engine == kernels::Fp64Engine::int8) return v >= kernels::kInt8MinModuli && v <= kernels::kInt8MaxModuli;
    return kernels::fp64_variant(static_cast<int>(v)) != nullptr;
}

// The accepted AMXBLAS_FP64_PRODUCTS values for the engine in force, for its warning.
std::string fp64_products_choices(kernels::Fp64Engine engine) {
    std::string choices[kernels::kInt8MaxModuli + kernels::kVariantCount + 2] = {"0"};
    int n = 1;
    for (int v = 1; v <= std::max(kernels::kMaxFp64Products, kernels::kInt8MaxModuli); ++v)
        if (fp64_count_accepted(engine, v)) choices[n++] = std::to_string(v);
    choices[n++] = "auto";
    return std::string("accepted with AMXBLAS_FP64_ENGINE=") + kFp64EngineNames[static_cast<int>(engine)] + ": " +
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

Settings read_settings(EnvLookup env, int cores) {
    Settings s;
    s.num_threads = cores > 0 ? cores : 1;
    long v;

    if (const char* x = env("AMXBLAS_FP32")) {
        if (!std::strcmp(x, "1")) s.fp32 = true;
        else if (!std::strcmp(x, "0")) s.fp32 = false;
        else warn_invalid("AMXBLAS_FP32", x, "accepted: 0 or 1", "1");
    }
    // The engine first: it decides which counts AMXBLAS_FP64_PRODUCTS accepts.
    if (const char* x = env("AMXBLAS_FP64_ENGINE")) {
        const auto* name = std::find_if(std::begin(kFp64EngineNames), std::end(kFp64EngineNames),
                                        [x](const char* n) { return !std::strcmp(x, n); });
        if (name != std::end(kFp64EngineNames))
            s.fp64_engine = static_cast<kernels::Fp64Engine>(name - std::begin(kFp64EngineNames));
        else
            warn_invalid("AMXBLAS_FP64_ENGINE", x, "accepted: auto, bf16 or int8", "auto");
    }
    if (const char* x = env("AMXBLAS_FP64_PRODUCTS")) {
        if (!std::strcmp(x, "auto"))
            s.fp64_products = kernels::kFp64Auto;
        else if (parse_int(x, 0, std::max(kernels::kMaxFp64Products, kernels::kInt8MaxModuli), &v) &&
                 fp64_count_accepted(s.fp64_engine, v))
            s.fp64_products = static_cast<int>(v);
        else
            warn_invalid("AMXBLAS_FP64_PRODUCTS", x, fp64_products_choices(s.fp64_engine).c_str(), "0");
    }
    if (const char* x = env("AMXBLAS_FP64_TOL")) {
        double t = 0;
        if (parse_decimal(x, &t) && t >= 1e-3 && t <= 1e15)
            s.fp64_tol = t;
        else
            warn_invalid("AMXBLAS_FP64_TOL", x, "accepted: a decimal number from 0.001 to 1e15", "1");
    }
    if (const char* x = env("AMXBLAS_MIN_N")) {
        if (parse_int(x, 1, 1L << 30, &v)) s.min_n = static_cast<int>(v);
        else warn_invalid("AMXBLAS_MIN_N", x, "accepted: an integer >= 1, digits only", "256");
    }
    if (const char* x = env("AMXBLAS_SHAPES")) {
        if (!std::strcmp(x, "square")) s.shapes = ShapeRule::square;
        else if (!std::strcmp(x, "any")) s.shapes = ShapeRule::any;
        else if (!std::strcmp(x, "auto")) s.shapes = ShapeRule::automatic;
        else warn_invalid("AMXBLAS_SHAPES", x, "accepted: auto, square or any", "auto");
    }
    if (const char* x = env("AMXBLAS_BACKEND")) {
        kernels::Backend b;
        if (!std::strcmp(x, "auto")) s.backend = BackendChoice::automatic;
        else if (kernels::parse_backend(x, &b)) s.backend = static_cast<BackendChoice>(static_cast<int>(b) + 1);
        else warn_invalid("AMXBLAS_BACKEND", x, ("accepted: " + backend_choices()).c_str(), "auto");
    }
    const char* threads = env("AMXBLAS_NUM_THREADS");
    if (threads) {
        if (parse_int(threads, 1, 1 << 16, &v)) s.num_threads = static_cast<int>(v);
        else warn_invalid("AMXBLAS_NUM_THREADS", threads, "accepted: an integer >= 1, digits only",
                          "OMP_NUM_THREADS, else all cores");
    }
    if (!threads || !parse_int(threads, 1, 1 << 16, &v)) {
        if (const char* omp = env("OMP_NUM_THREADS"); omp && parse_omp_threads(omp, &v))
            s.num_threads = static_cast<int>(v);
    }
    if (const char* x = env("AMXBLAS_VERBOSE")) {
        if (parse_int(x, 0, 2, &v)) s.verbose = static_cast<int>(v);
        else warn_invalid("AMXBLAS_VERBOSE", x, "accepted: 0, 1 or 2", "0");
    }
    if (const char* x = env("AMXBLAS_LOG")) s.log_path = x;
    if (const char* x = env("AMXBLAS_SUMMARY_EVERY")) {
        if (parse_int(x, 0, 1L << 30, &v)) s.summary_every_s = static_cast<int>(v);
        else warn_invalid("AMXBLAS_SUMMARY_EVERY", x, "accepted: an integer >= 0 (seconds), digits only", "0 (at exit only)");
    }
    if (const char* x = env("AMXBLAS_FALLBACK")) s.fallback = x;
    if (const char* x = env("AMXBLAS_MAX_WORKSPACE_MB")) {
        if (parse_int(x, 0, 1L << 40, &v)) s.workspace_cap_bytes = static_cast<size_t>(v) << 20;
        else warn_invalid("AMXBLAS_MAX_WORKSPACE_MB", x, "accepted: an integer >= 0, digits only", "0 (no cap)");
    }
    if (const char* x = env("AMXBLAS_RECORD")) s.record_dir = x;
    if (const char* x = env("AMXBLAS_WISDOM")) s.wisdom = x;
    if (const char* x = env("AMXBLAS_RECORD_ALL")) {
        if (!std::strcmp(x, "1")) s.record_all = true;
        else if (!std::strcmp(x, "0")) s.record_all = false;
        else warn_invalid("AMXBLAS_RECORD_ALL", x, "accepted: 0 or 1", "0");
    }
    if (const char* x = env("AMXBLAS_RECORD_MAX_MB")) {
        // At least 1: a cap of 0 would record nothing, which leaving AMXBLAS_RECORD unset says.
        if (parse_int(x, 1, 1L << 30, &v)) s.record_max_bytes = static_cast<size_t>(v) << 20;
        else warn_invalid("AMXBLAS_RECORD_MAX_MB", x, "accepted: an integer from 1 to 1073741824, digits only", "256");
    }
    return s;
}

const Settings& settings() {
    static const Settings s = [] {
        // AMXBLAS_FP64_TOL's digits read the same under any rounding mode of the caller's.
        const kernels::LibraryFpEnvironment own_arithmetic;
        return read_settings([](const char* name) -> const char* { return std::getenv(name); }, hardware().cores);
    }();
    return s;
}

}  // namespace amxblas

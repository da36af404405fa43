#include "shim/config_warnings.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <string_view>

#include "shim/outlook.h"

namespace amxblas {

namespace {

struct KnownVariable {
    const char* name;
    bool suggested;  // a name a user sets to configure amxblas: the library's and the launcher's
};
constexpr KnownVariable kKnownVariables[] = {
#define AMXBLAS_VARIABLE(name, reader) {#name, std::string_view(#reader) != "packaging"},
#include "shim/variables.def"
#undef AMXBLAS_VARIABLE
};
constexpr const char kPrefix[] = "AMXBLAS_";
constexpr const char kTestPrefix[] = "AMXBLAS_TEST_";  // the project's test suite's own

// Edits (insertions, deletions, substitutions, ignoring case) from a to b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const bool same = std::toupper(static_cast<unsigned char>(a[i - 1])) ==
                              std::toupper(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The configuration variable nearest to `name` (the first of the table among equals).
const char* nearest_known(const std::string& name) {
    const char* best = nullptr;
    std::size_t best_distance = 0;
    for (const KnownVariable& known : kKnownVariables) {
        if (!known.suggested) continue;
        const std::size_t d = edit_distance(name, known.name);
        if (!best || d < best_distance) {
            best = known.name;
            best_distance = d;
        }
    }
    return best;
}

// Known: a row of the table, or the test suite's, spelt exactly (amxblas_verbose is not read).
bool is_known(const std::string& name) {
    if (name.compare(0, sizeof kTestPrefix - 1, kTestPrefix) == 0) return true;
    return std::any_of(std::begin(kKnownVariables), std::end(kKnownVariables),
                       [&](const KnownVariable& known) { return name == known.name; });
}

}  // namespace

std::vector<std::string> configuration_warnings(const char* const* environment, const Settings& s,
                                                const Hardware& hw) {
    std::vector<std::string> warnings;
    for (const char* const* e = environment; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        const std::string name(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
        if (strncasecmp(name.c_str(), kPrefix, sizeof kPrefix - 1) != 0 || is_known(name)) continue;
        warnings.push_back("warning: " + name + " is not a variable of amxblas and is ignored; did you mean " +
                           nearest_known(name) + "?");
    }
    if (!s.log_path.empty() && s.verbose == 0)
        warnings.push_back("warning: AMXBLAS_LOG=" + s.log_path +
                           " is set, but AMXBLAS_VERBOSE=0 turns logging off: nothing is written there (leave "
                           "AMXBLAS_VERBOSE unset, or set it to 1 or 2)");
    if (std::string backend = backend_request_warning(s, hw); !backend.empty()) warnings.push_back(backend);
    return warnings;
}

}  // namespace amxblas

// docs/reasons.md documents exactly the reasons and notes the library can print: every name
// of all_reasons() is the first cell of one table row, and every such row names one of them.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "policy/reasons.h"

// After the C++ headers: cmocka's fail() macro would rename std::basic_ios::fail.
extern "C" {
#include <cmocka.h>
}

namespace {

// First-cell names of the Markdown table rows: "| `domain:nonfinite` | ... |": a name of
// lowercase letters and digits, a colon, then letters, digits and dashes. (Plain string
// parsing: <regex> took most of this test's compile time.)
bool reason_name(const std::string& s) {
    const std::size_t colon = s.find(':');
    if (colon == 0 || colon == std::string::npos || colon + 1 == s.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || i == colon || (i > colon && c == '-');
        if (!ok) return false;
    }
    return true;
}

std::map<std::string, int> documented_names(const char* path) {
    std::ifstream in(path);
    if (!in) fail_msg("cannot open %s", path);
    std::map<std::string, int> names;
    std::string line;
    while (std::getline(in, line)) {
        // "|", spaces, "`name`", spaces, "|"
        if (line.empty() || line[0] != '|') continue;
        std::size_t i = line.find_first_not_of(" \t", 1);
        if (i == std::string::npos || line[i] != '`') continue;
        const std::size_t close = line.find('`', i + 1);
        if (close == std::string::npos) continue;
        const std::size_t bar = line.find_first_not_of(" \t", close + 1);
        if (bar == std::string::npos || line[bar] != '|') continue;
        const std::string name = line.substr(i + 1, close - i - 1);
        if (reason_name(name)) ++names[name];
    }
    return names;
}

void every_reason_documented_once(void**) {
    const std::map<std::string, int> doc = documented_names(AMXBLAS_REASONS_MD);
    std::size_t count = 0;
    const amxblas::ReasonEntry* all = amxblas::all_reasons(&count);
    assert_true(count > 0);
    std::set<std::string> code;
    for (std::size_t i = 0; i < count; ++i) {
        const std::string name = all[i].name;
        if (!code.insert(name).second) fail_msg("%s listed twice in all_reasons()", name.c_str());
        const auto it = doc.find(name);
        if (it == doc.end()) fail_msg("%s is not documented in docs/reasons.md", name.c_str());
        if (it->second != 1)
            fail_msg("%s has %d rows in docs/reasons.md", name.c_str(), it->second);
    }
    for (const auto& [name, rows] : doc)
        if (!code.count(name)) fail_msg("docs/reasons.md documents %s, which the code never prints",
                                        name.c_str());
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_reason_documented_once),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

// docs/reasons.md documents exactly the reasons and notes the library can print: every name
// of all_reasons() is the first cell of one table row, and every such row names one of them.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "policy/reasons.h"

// After the C++ headers: cmocka's fail() macro would rename std::basic_ios::fail.
extern "C" {
#include <cmocka.h>
}

namespace {

// First-cell names of the Markdown table rows: "| `domain:nonfinite` | ... |".
std::map<std::string, int> documented_names(const char* path) {
    std::ifstream in(path);
    if (!in) fail_msg("cannot open %s", path);
    const std::regex row(R"(^\|\s*`([a-z0-9]+:[a-z0-9-]+)`\s*\|)");
    std::map<std::string, int> names;
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, row)) ++names[m[1].str()];
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

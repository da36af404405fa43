#include "policy/wisdom.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace amxblas {

namespace {

// The range a measured constant may take, by the kind of its name. Wide (no machine is near
// the ends), so that wisdom with wrong but possible rates is followed (that is what a user asks
// for by keeping it) while a value no measurement gives (0 where a rate divides, a negative
// time, 1e300) refuses the file.
struct Range {
    double lo, hi;
};
bool ends_with(const char* s, const char* tail) {
    const std::size_t n = std::strlen(s), t = std::strlen(tail);
    return n >= t && std::strcmp(s + n - t, tail) == 0;
}
Range range_of(const char* name) {
    if (ends_with(name, "_cycles")) return {0.01, 1e4};
    if (!std::strcmp(name, "clock_hz")) return {1e7, 1e11};
    if (!std::strcmp(name, "overhead_s")) return {0, 10};
    if (std::strstr(name, "step_s") || std::strstr(name, "tile_s")) return {0, 1};
    return {1e3, 1e16};  // bytes, values or flops per second
}
constexpr Range kFixedRange{0, 10}, kRateRange{1e3, 1e16}, kPerValueRange{0, 1e-3};

// A number and nothing else (from_chars: no locale, no leading space, no hex unless asked).
bool parse_number(const std::string& s, Range r, double* out) {
    if (s.empty()) return false;
    double v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
    if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v)) return false;
    if (v < r.lo || v > r.hi) return false;
    *out = v;
    return true;
}

bool printable(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return false;
    return true;
}

std::string trim(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") + 1 - b);
}

int field_index(const std::string& name) {
    for (int i = 0; i < kCostFieldCount; ++i)
        if (name == kCostFields[i].name) return i;
    return -1;
}

// The key's text fields in the file's order, with their words.
struct KeyText {
    const char* word;
    std::string WisdomKey::*member;
};
constexpr KeyText kKeyText[] = {{"cpu", &WisdomKey::cpu},           {"features", &WisdomKey::features},
                                {"backend", &WisdomKey::backend},   {"blas", &WisdomKey::blas},
                                {"blas-build", &WisdomKey::blas_build}, {"library", &WisdomKey::library}};

// One entry's lines, between "entry" and "end".
class EntryParser {
public:
    // Empty when the line was taken, else why not.
    std::string take(const std::string& word, const std::string& value) {
        if (!seen_.insert(word == "blas-time" ? word + " " + value.substr(0, value.find(' ')) : word))
            return "'" + word + "' given twice in one entry";
        for (const KeyText& k : kKeyText)
            if (word == k.word) {
                if (value.empty()) return "'" + word + "' has no value";
                e_.key.*k.member = value;
                return "";
            }
        if (word == "threads") {
            double t = 0;
            if (!parse_number(value, {1, 65536}, &t) || t != std::floor(t)) return "threads: not an integer from 1 to 65536";
            e_.key.threads = int(t);
            return "";
        }
        if (word == "measured") {
            e_.measured = value;
            return "";
        }
        if (word == "blas-time") return blas_time(value);
        const int i = field_index(word);
        if (i < 0) return "unknown word '" + word + "'";
        if (!parse_number(value, range_of(kCostFields[i].name), &(e_.costs.phases.*kCostFields[i].member)))
            return std::string(kCostFields[i].name) + ": not a number in its range";
        e_.costs.measured |= 1ULL << i;
        return "";
    }
    // Empty when the entry is whole, else what it lacks.
    std::string finish(WisdomEntry* out) const {
        for (const KeyText& k : kKeyText)
            if ((e_.key.*k.member).empty()) return std::string("the entry has no '") + k.word + "'";
        if (e_.key.threads == 0) return "the entry has no 'threads'";
        *out = e_;
        return "";
    }

private:
    // "ROUTINE fixed_s flops_s c_s a_s b_s".
    std::string blas_time(const std::string& value) {
        std::istringstream in(value);
        std::string routine, f[5];
        in >> routine >> f[0] >> f[1] >> f[2] >> f[3] >> f[4];
        std::string extra;
        if (!(in >> extra).fail() || f[4].empty()) return "blas-time: expected ROUTINE and five numbers";
        int r = -1;
        for (int i = 0; i < kBlasRoutineCount; ++i)
            if (routine == kBlasRoutineNames[i]) r = i;
        if (r < 0) return "blas-time: unknown routine '" + routine + "' (sgemm, dgemm, cgemm, zgemm)";
        BlasTimeModel& m = e_.costs.blas[r];
        if (!parse_number(f[0], kFixedRange, &m.fixed_s) || !parse_number(f[1], kRateRange, &m.flops_s) ||
            !parse_number(f[2], kPerValueRange, &m.c_s) || !parse_number(f[3], kPerValueRange, &m.a_s) ||
            !parse_number(f[4], kPerValueRange, &m.b_s))
            return "blas-time " + routine + ": a number out of its range";
        e_.costs.blas_measured[r] = true;
        return "";
    }

    // The words already seen (a handful: a linear set).
    struct Seen {
        std::vector<std::string> words;
        bool insert(const std::string& w) {
            for (const std::string& x : words)
                if (x == w) return false;
            words.push_back(w);
            return true;
        }
    } seen_;
    WisdomEntry e_;
};

}  // namespace

bool parse_wisdom(const std::string& text, std::vector<WisdomEntry>* out, std::string* why) {
    out->clear();
    auto fail = [&](int line, const std::string& reason) {
        out->clear();
        *why = (line > 0 ? "line " + std::to_string(line) + ": " : std::string()) + reason;
        return false;
    };
    if (text.size() > kWisdomMaxBytes) return fail(0, "larger than " + std::to_string(kWisdomMaxBytes) + " bytes");
    if (text.find('\0') != std::string::npos) return fail(0, "not text (a NUL byte)");
    std::istringstream in(text);
    std::string raw;
    int line = 0;
    bool header = false;
    EntryParser* entry = nullptr;
    EntryParser current;
    while (std::getline(in, raw)) {
        ++line;
        const std::string l = trim(raw);
        if (l.empty() || l[0] == '#') continue;
        if (!printable(l)) return fail(line, "a control character");
        if (!header) {
            if (l != "amxblas-wisdom " + std::to_string(kWisdomFormat))
                return fail(line, "not an amxblas wisdom file of format " + std::to_string(kWisdomFormat) +
                                      " (its first line must be 'amxblas-wisdom " + std::to_string(kWisdomFormat) + "')");
            header = true;
            continue;
        }
        const std::size_t sp = l.find_first_of(" \t");
        const std::string word = l.substr(0, sp), value = sp == std::string::npos ? "" : trim(l.substr(sp));
        if (!entry) {
            if (l != "entry") return fail(line, "expected 'entry'");
            if (int(out->size()) >= kWisdomMaxEntries)
                return fail(line, "more than " + std::to_string(kWisdomMaxEntries) + " entries");
            current = EntryParser();
            entry = &current;
            continue;
        }
        if (l == "end") {
            WisdomEntry e;
            const std::string lacks = entry->finish(&e);
            if (!lacks.empty()) return fail(line, lacks);
            out->push_back(e);
            entry = nullptr;
            continue;
        }
        if (l == "entry") return fail(line, "'entry' inside an entry (no 'end' before it)");
        const std::string bad = entry->take(word, value);
        if (!bad.empty()) return fail(line, bad);
    }
    if (!header) return fail(0, "empty: no 'amxblas-wisdom " + std::to_string(kWisdomFormat) + "' line");
    if (entry) return fail(line, "the last entry has no 'end'");
    why->clear();
    return true;
}

std::string format_wisdom(const std::vector<WisdomEntry>& entries) {
    std::string s = "amxblas-wisdom " + std::to_string(kWisdomFormat) + "\n";
    s += "# The cost model's constants measured by amxblas-run --calibrate (docs/cost-model.md, \"Wisdom\").\n";
    s += "# Each entry is used only by a process whose key (the lines up to 'library') equals it.\n";
    char num[64];
    auto g = [&](double v) {
        std::snprintf(num, sizeof num, "%.6g", v);
        return std::string(num);
    };
    for (const WisdomEntry& e : entries) {
        s += "entry\n";
        for (const KeyText& k : kKeyText) {
            s += std::string("  ") + k.word + " " + e.key.*k.member + "\n";
            if (k.member == &WisdomKey::backend) s += "  threads " + std::to_string(e.key.threads) + "\n";
        }
        if (!e.measured.empty()) s += "  measured " + e.measured + "\n";
        for (int i = 0; i < kCostFieldCount; ++i)
            if (e.costs.measured >> i & 1) s += std::string("  ") + kCostFields[i].name + " " + g(e.costs.phases.*kCostFields[i].member) + "\n";
        for (int r = 0; r < kBlasRoutineCount; ++r) {
            if (!e.costs.blas_measured[r]) continue;
            const BlasTimeModel& m = e.costs.blas[r];
            s += std::string("  blas-time ") + kBlasRoutineNames[r] + " " + g(m.fixed_s) + " " + g(m.flops_s) + " " +
                 g(m.c_s) + " " + g(m.a_s) + " " + g(m.b_s) + "\n";
        }
        s += "end\n";
    }
    return s;
}

namespace {

bool same_key(const WisdomKey& a, const WisdomKey& b) {
    return a.cpu == b.cpu && a.features == b.features && a.backend == b.backend && a.threads == b.threads &&
           a.blas == b.blas && a.blas_build == b.blas_build && a.library == b.library;
}

}  // namespace

const WisdomEntry* find_wisdom(const std::vector<WisdomEntry>& entries, const WisdomKey& key, std::string* mismatch,
                               bool* stale) {
    // The nearest entry: the most fields equal, in the order that says most about why.
    struct Test {
        bool (*equal)(const WisdomKey&, const WisdomKey&);
        const char* differs;
    };
    static const Test tests[] = {
        {[](const WisdomKey& a, const WisdomKey& b) { return a.cpu == b.cpu && a.features == b.features; },
         "its entries were measured on another CPU"},
        {[](const WisdomKey& a, const WisdomKey& b) { return a.library == b.library; },
         "its entries were measured by another version of amxblas or of its cost model"},
        {[](const WisdomKey& a, const WisdomKey& b) { return a.blas == b.blas; },
         "its entries are for another BLAS library"},
        {[](const WisdomKey& a, const WisdomKey& b) { return a.blas_build == b.blas_build; },
         "the BLAS library has changed since it was measured (rebuilt or upgraded)"},
        {[](const WisdomKey& a, const WisdomKey& b) { return a.backend == b.backend; },
         "its entries are for another backend"},
        {[](const WisdomKey& a, const WisdomKey& b) { return a.threads == b.threads; },
         "its entries are for another thread count"},
    };
    int best = -1;
    for (const WisdomEntry& e : entries) {
        if (same_key(e.key, key)) return &e;
        int equal = 0;
        while (equal < int(sizeof tests / sizeof tests[0]) && tests[equal].equal(e.key, key)) ++equal;
        best = std::max(best, equal);
    }
    const int last = int(sizeof tests / sizeof tests[0]) - 1;
    *mismatch = best < 0 ? "it has no entries" : tests[std::min(best, last)].differs;
    if (stale) *stale = best >= 0 && best < 4;  // the CPU, the version, the BLAS or its build
    return nullptr;
}

void put_wisdom(std::vector<WisdomEntry>* entries, const WisdomEntry& e) {
    for (WisdomEntry& x : *entries)
        if (same_key(x.key, e.key)) {
            x = e;
            return;
        }
    entries->push_back(e);
}

CostTable apply_wisdom(const CostTable& builtin, const WisdomEntry& e) {
    CostTable t = builtin;
    for (int i = 0; i < kCostFieldCount; ++i)
        if (e.costs.measured >> i & 1) t.phases.*kCostFields[i].member = e.costs.phases.*kCostFields[i].member;
    t.measured = e.costs.measured;
    for (int r = 0; r < kBlasRoutineCount; ++r) {
        t.blas[r] = e.costs.blas[r];
        t.blas_measured[r] = e.costs.blas_measured[r];
    }
    return t;
}

}  // namespace amxblas

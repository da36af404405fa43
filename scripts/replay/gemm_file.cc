#include "scripts/replay/gemm_file.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <memory>
#include <sstream>

namespace amxblas::replay {

namespace {

// The header is short (13 fields); a first line longer than this is no header.
constexpr std::size_t kMaxHeader = 1024;

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

// A size or leading dimension: decimal digits only, at most 2^31 - 1 (the replay calls the
// 32-bit-integer BLAS interface).
bool parse_int(const std::string& s, int* out) {
    if (s.empty() || s.size() > 10) return false;
    long long v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return false;
        v = v * 10 + (ch - '0');
    }
    if (v > INT_MAX) return false;
    *out = static_cast<int>(v);
    return true;
}

// A scalar as printed by %.17g (or %g): the whole field must be a number (nan and inf too).
bool parse_double(const std::string& s, double* out) {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
    *out = v;  // ERANGE (a value beyond double's range) reads as inf or 0, as C's strtod does
    return true;
}

bool fail(std::string* error, const std::string& text) {
    *error = text;
    return false;
}

// Reads count values of `bytes` bytes each (4: float, 8: double) into out, widened to double.
bool read_values(std::FILE* f, std::size_t count, int bytes, std::vector<double>* out) {
    out->resize(count);
    if (bytes == 8) return std::fread(out->data(), 8, count, f) == count;
    std::vector<float> tmp(count);
    if (std::fread(tmp.data(), 4, count, f) != count) return false;
    for (std::size_t i = 0; i < count; ++i) (*out)[i] = tmp[i];
    return true;
}

}  // namespace

bool read_gemm_file(const char* path, GemmFile* out, std::string* error) {
    std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path, "rb"));
    if (!f) return fail(error, std::string("cannot open: ") + std::strerror(errno));
    std::string header;
    int ch;
    while ((ch = std::fgetc(f.get())) != EOF && ch != '\n') {
        if (header.size() >= kMaxHeader)
            return fail(error, "no header line: no newline in the first " + std::to_string(kMaxHeader) + " bytes");
        header.push_back(static_cast<char>(ch));
    }
    if (ch == EOF)
        return fail(error, header.empty() ? "empty file" : "no header line: the file has no newline");

    std::istringstream fields(header);
    std::vector<std::string> t;
    for (std::string w; fields >> w;) t.push_back(w);
    if (t.size() != 13)
        return fail(error, "the header has " + std::to_string(t.size()) +
                               " fields, expected 13: routine TRANSA TRANSB M N K alpha_re alpha_im "
                               "LDA LDB beta_re beta_im LDC");

    GemmFile g;
    for (char& c : t[0]) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    g.routine = t[0];
    if (g.routine != "sgemm" && g.routine != "dgemm" && g.routine != "cgemm" && g.routine != "zgemm")
        return fail(error, "unknown routine '" + t[0] + "' (sgemm, dgemm, cgemm or zgemm)");
    g.complex = g.routine[0] == 'c' || g.routine[0] == 'z';
    g.single = g.routine[0] == 's' || g.routine[0] == 'c';
    for (int i : {1, 2}) {
        const std::string& s = t[i];
        const char up = s.size() == 1 ? static_cast<char>(std::toupper(static_cast<unsigned char>(s[0]))) : 0;
        if (up != 'N' && up != 'T' && up != 'C')
            return fail(error, std::string(i == 1 ? "TRANSA" : "TRANSB") + " is '" + s + "' (N, T or C)");
        (i == 1 ? g.transa : g.transb) = up;
    }
    const char* int_names[] = {"M", "N", "K", "LDA", "LDB", "LDC"};
    int* int_fields[] = {&g.m, &g.n, &g.k, &g.lda, &g.ldb, &g.ldc};
    const int int_index[] = {3, 4, 5, 8, 9, 12};
    for (int i = 0; i < 6; ++i)
        if (!parse_int(t[int_index[i]], int_fields[i]))
            return fail(error, std::string(int_names[i]) + " is '" + t[int_index[i]] +
                                   "' (decimal digits, at most 2147483647)");
    const char* scalar_names[] = {"alpha_re", "alpha_im", "beta_re", "beta_im"};
    double* scalar_fields[] = {&g.alpha[0], &g.alpha[1], &g.beta[0], &g.beta[1]};
    const int scalar_index[] = {6, 7, 10, 11};
    for (int i = 0; i < 4; ++i)
        if (!parse_double(t[scalar_index[i]], scalar_fields[i]))
            return fail(error, std::string(scalar_names[i]) + " is '" + t[scalar_index[i]] + "' (a number)");
    if (!g.complex && (g.alpha[1] != 0 || g.beta[1] != 0))
        return fail(error, g.routine + " has real scalars: alpha_im and beta_im must be 0");
    if (g.m < 1 || g.n < 1)
        return fail(error, "M = " + std::to_string(g.m) + ", N = " + std::to_string(g.n) +
                               ": C has no entries, there is nothing to replay");

    g.a_rows = g.transa == 'N' ? g.m : g.k;
    g.a_cols = g.transa == 'N' ? g.k : g.m;
    g.b_rows = g.transb == 'N' ? g.k : g.n;
    g.b_cols = g.transb == 'N' ? g.n : g.k;
    auto min_ld = [](int rows) { return rows > 1 ? rows : 1; };
    if (g.lda < min_ld(g.a_rows))
        return fail(error, "LDA = " + std::to_string(g.lda) + " is below the rows of the stored A (" +
                               std::to_string(min_ld(g.a_rows)) + ")");
    if (g.ldb < min_ld(g.b_rows))
        return fail(error, "LDB = " + std::to_string(g.ldb) + " is below the rows of the stored B (" +
                               std::to_string(min_ld(g.b_rows)) + ")");
    if (g.ldc < g.m)
        return fail(error, "LDC = " + std::to_string(g.ldc) + " is below M = " + std::to_string(g.m));

    // The matrices' size, checked against the file's before anything is allocated. Each count
    // is below 2^63 (two factors below 2^31, times 2 parts); their byte total is summed in 128
    // bits, where it cannot overflow.
    const std::uint64_t na = std::uint64_t(g.lda) * std::uint64_t(g.a_cols) * g.parts();
    const std::uint64_t nb = std::uint64_t(g.ldb) * std::uint64_t(g.b_cols) * g.parts();
    const std::uint64_t nc = std::uint64_t(g.ldc) * std::uint64_t(g.n) * g.parts();
    const unsigned __int128 want128 =
        (static_cast<unsigned __int128>(na) + nb + nc) * (g.single ? 4u : 8u);
    const long start = std::ftell(f.get());
    if (start < 0 || std::fseek(f.get(), 0, SEEK_END) != 0)
        return fail(error, std::string("cannot seek: ") + std::strerror(errno));
    const long end = std::ftell(f.get());
    if (end < start || std::fseek(f.get(), start, SEEK_SET) != 0)
        return fail(error, std::string("cannot seek: ") + std::strerror(errno));
    const std::uint64_t have = static_cast<std::uint64_t>(end - start);
    if (want128 > have) {
        const std::string want_text = want128 >> 64 ? std::string("more than 2^64")
                                                    : std::to_string(static_cast<std::uint64_t>(want128));
        return fail(error, "truncated: the header describes " + want_text +
                               " bytes of matrices, the file holds " + std::to_string(have));
    }
    const std::uint64_t want = static_cast<std::uint64_t>(want128);
    if (have > want)
        return fail(error, std::to_string(have - want) + " bytes after the " + std::to_string(want) +
                               " bytes of matrices the header describes");
    const int bytes = g.single ? 4 : 8;
    if (!read_values(f.get(), na, bytes, &g.a) || !read_values(f.get(), nb, bytes, &g.b) ||
        !read_values(f.get(), nc, bytes, &g.c))
        return fail(error, std::string("read error: ") + std::strerror(errno));
    *out = std::move(g);
    return true;
}

}  // namespace amxblas::replay

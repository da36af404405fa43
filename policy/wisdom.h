// Wisdom (docs/cost-model.md, "Wisdom"): the cost model's constants as `amxblas-run --calibrate`
// measured them on a machine, kept in a text file of entries, each keyed by everything the
// measurement depends on. This is the file's format and the matching of keys, as pure functions
// of text and values; reading the file and finding this process's key are the shim's
// (shim/wisdom.h), measuring is the calibration tool's (scripts/calibrate/).
//
// As FFTW keeps its wisdom (its import checks a signature of the planner's configuration and
// takes all of a file's plans or none), a file is taken whole or not at all: one line that does
// not parse, one number out of its range, and the whole file is refused, so that a damaged file
// can never change a decision. An entry is used only where its key equals the process's in
// every field; the file may hold entries for other machines (a home directory that several
// kinds of node share), other BLAS libraries, backends and thread counts.
//
//   amxblas-wisdom 1
//   entry
//     cpu GenuineIntel family 6 model 207 stepping 2: Intel(R) Xeon(R) Processor
//     features avx2 avx512 avx512-bf16 avx512-vnni
//     backend avx512
//     threads 2
//     blas /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so
//     blas-build build-id 5e3b...
//     library amxblas 0.1.0 model 1
//     measured 2026-12-07T03:10:00Z in 4.1 s
//     step_s_fp32 4.9e-07                (any of kCostFields: the constants measured)
//     blas-time dgemm 2e-06 1.1e+10 1e-10 5e-11 5e-11  (fixed_s flops_s c_s a_s b_s)
//   end
#pragma once

#include <string>
#include <vector>

#include "policy/cost_model.h"

namespace amxblas {

// The "amxblas-wisdom N" line: the format's version.
inline constexpr int kWisdomFormat = 1;
// The cost model's version in the key ("library amxblas X model N"): raised whenever the meaning
// of a measured constant changes, so that wisdom measured for the old formulas is stale.
inline constexpr int kCostModelVersion = 1;
// A file larger than this, or with more entries, is refused (no wisdom is that large).
inline constexpr std::size_t kWisdomMaxBytes = std::size_t{1} << 20;
inline constexpr int kWisdomMaxEntries = 512;

// What an entry's measurements depend on. Each field is one line of text, compared as is.
struct WisdomKey {
    std::string cpu;         // vendor, family, model, stepping, brand string
    std::string features;    // the instruction sets the backends use, as this CPU and OS run them
    std::string backend;     // kernels::backend_name()
    int threads = 0;         // the routed calls' threads: min(AMXBLAS_NUM_THREADS or its default, cores)
    std::string blas;        // the real BLAS: the file that holds its GEMMs (real path)
    std::string blas_build;  // which build of it: "build-id HEX", else "size BYTES mtime SECONDS"
    std::string library;     // "amxblas VERSION model kCostModelVersion"
};

struct WisdomEntry {
    WisdomKey key;
    std::string measured;  // when and how long (informational, not compared)
    CostTable costs;       // the measured constants; the others are left 0 here
};

// Parses a wisdom file's text: true with its entries in *out; false with the reason in *why
// ("line 12: ...") and *out empty, for anything that is not a well-formed file.
bool parse_wisdom(const std::string& text, std::vector<WisdomEntry>* out, std::string* why);

// The text of a file of these entries (parse_wisdom reads back the same keys, and the numbers
// to the 6 significant digits written).
std::string format_wisdom(const std::vector<WisdomEntry>& entries);

// The entry whose key equals `key`, or nullptr; then *mismatch says how the nearest entry's key
// differs ("another CPU", "another BLAS library", "the BLAS library has changed", ...), and
// *stale (when given) whether that makes the file stale or foreign for this process (another
// CPU, version, BLAS library or build of it) rather than measured for other settings of it
// (another backend or thread count), or empty.
const WisdomEntry* find_wisdom(const std::vector<WisdomEntry>& entries, const WisdomKey& key, std::string* mismatch,
                               bool* stale = nullptr);

// Entries with `e`'s key replaced by e (or e added): what calibration writes back.
void put_wisdom(std::vector<WisdomEntry>* entries, const WisdomEntry& e);

// The built-in table of the key's backend with the entry's measured constants over it.
CostTable apply_wisdom(const CostTable& builtin, const WisdomEntry& e);

}  // namespace amxblas

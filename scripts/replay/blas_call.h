// The BLAS a replay calls: the Fortran symbols (sgemm_, dgemm_, cgemm_, zgemm_) this program
// resolves, which are those of the library it is linked with (Debian's libblas.so.3), or of
// libamxblas.so when that is preloaded; or, for --against-openblas, those of an OpenBLAS opened
// with dlopen, whose own symbols a preloaded library does not replace (dlsym on its handle
// searches that library and its dependencies only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scripts/replay/gemm_file.h"

namespace amxblas::replay {

struct Blas {
    void* sgemm = nullptr;
    void* dgemm = nullptr;
    void* cgemm = nullptr;
    void* zgemm = nullptr;
    void* symbol(const std::string& routine) const;
};

// The symbols this program resolves (linked or preloaded).
Blas resolved_blas();

// The symbols of the library at `path` (a name such as libopenblas.so.0 or a path), opened
// with dlopen and kept open; false with *error when it cannot be opened or lacks a routine.
bool opened_blas(const char* path, Blas* out, std::string* error);

// The file that defines fn, from dladdr ("?" if unknown).
std::string defining_file(void* fn);

// Makes g's call on blas with a copy of C on entry; *c receives C after the call, LDC x N in
// g's layout, widened to double (exact for floats).
void run_call(const Blas& blas, const GemmFile& g, std::vector<double>* c);

// FNV-1a (64-bit) of the M x N entries of c (without LDC's padding) in the routine's own
// precision, so two runs' results compare bit for bit, and a program can print the same sum of
// its own C (tests/shim/record_program.c).
std::uint64_t checksum(const GemmFile& g, const std::vector<double>& c);

}  // namespace amxblas::replay

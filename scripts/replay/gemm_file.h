// One GEMM call stored in a .gemm file: what AMXBLAS_RECORD writes (shim/record.cc) and what the
// captured calls of tests/data/dft-gemm/ are. The format (docs/log.md):
//
//   routine TRANSA TRANSB M N K alpha_re alpha_im LDA LDB beta_re beta_im LDC\n
//
// then raw little-endian values, column-major: A (LDA x cols of the stored A), B (LDB x cols of
// the stored B), C on entry (LDC x N). routine is sgemm, dgemm, cgemm or zgemm; sgemm and cgemm
// store 4-byte floats, dgemm and zgemm 8-byte doubles, and cgemm and zgemm a (re, im) pair per
// value. The reader checks everything a BLAS call would need to be safe, so a malformed file is
// an error message, never a call.
#pragma once

#include <string>
#include <vector>

namespace amxblas::replay {

struct GemmFile {
    std::string routine;  // "sgemm", "dgemm", "cgemm" or "zgemm"
    bool complex = false;
    bool single = false;  // sgemm, cgemm: the values are floats (widened exactly below)
    char transa = 'N', transb = 'N';  // upper case
    int m = 0, n = 0, k = 0;
    double alpha[2] = {0, 0}, beta[2] = {0, 0};  // (re, im); im is 0 for the real routines
    int lda = 0, ldb = 0, ldc = 0;
    int a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;  // the stored A and B
    // The values in file order, widened to double (exact for floats); complex ones interleaved
    // (re, im), so a has lda * a_cols * 2 doubles for zgemm.
    std::vector<double> a, b, c;

    int parts() const { return complex ? 2 : 1; }
};

// Reads path into *out. False with a one-line *error (naming what is wrong and where) when the
// file cannot be read or is not a well-formed .gemm file.
bool read_gemm_file(const char* path, GemmFile* out, std::string* error);

}  // namespace amxblas::replay

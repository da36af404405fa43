// Messages that must reach the user whatever the verbosity: one line on stderr, prefixed
// "amxblas: ", written with a single write(2). A leaf of the shim: the configuration (which
// warns about invalid values) and the log (which reads the configuration) both use it.
#pragma once

#include <cstddef>

namespace amxblas {

// Writes the whole buffer to fd, retrying a short write (a line to a pipe) and EINTR; the log
// uses it too, so that each of its lines is one write(2). False when a write failed (errno
// says why): the recorder (shim/record.cc) must know that a file is incomplete.
bool write_all(int fd, const char* buf, std::size_t len);

void warning_message(const char* text);
void fatal_message(const char* text);  // prefixed "amxblas: error: "

}  // namespace amxblas

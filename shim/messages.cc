#include "shim/messages.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace amxblas {

bool write_all(int fd, const char* buf, std::size_t len) {
    while (len > 0) {
        const ssize_t w = ::write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        buf += w;
        len -= static_cast<std::size_t>(w);
    }
    return true;
}

namespace {

void write_line_to_stderr(const char* prefix, const char* text) {
    char line[1024];
    const int n = std::snprintf(line, sizeof line, "amxblas: %s%s\n", prefix, text);
    if (n > 0) write_all(STDERR_FILENO, line, static_cast<std::size_t>(n) < sizeof line ? n : sizeof line - 1);
}

}  // namespace

void warning_message(const char* text) { write_line_to_stderr("", text); }

void fatal_message(const char* text) { write_line_to_stderr("error: ", text); }

}  // namespace amxblas

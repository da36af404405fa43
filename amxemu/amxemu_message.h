// The harness's messages without stdio, for the signal handler (async-signal-safe): built in
// a buffer of the caller's stack, written to stderr with write(2); die() then aborts.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace amxemu {

class Msg {
public:
    Msg& s(const char* str) {
        while (*str && n_ < sizeof(buf_) - 1) buf_[n_++] = *str++;
        return *this;
    }
    Msg& u(uint64_t v) {
        char tmp[24];
        int k = 0;
        do {
            tmp[k++] = char('0' + v % 10);
            v /= 10;
        } while (v);
        while (k && n_ < sizeof(buf_) - 1) buf_[n_++] = tmp[--k];
        return *this;
    }
    Msg& x(uint64_t v) {
        s("0x");
        char tmp[16];
        int k = 0;
        do {
            tmp[k++] = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v);
        while (k && n_ < sizeof(buf_) - 1) buf_[n_++] = tmp[--k];
        return *this;
    }
    Msg& tile(int t) { return s("tmm").u(uint64_t(t)); }
    void write_out() {
        buf_[n_++] = '\n';
        std::size_t off = 0;
        while (off < n_) {
            ssize_t w = write(STDERR_FILENO, buf_ + off, n_ - off);
            if (w <= 0) break;
            off += std::size_t(w);
        }
    }
    [[noreturn]] void die() {
        write_out();
        abort();
    }

private:
    char buf_[768];
    std::size_t n_ = 0;
};

}  // namespace amxemu

// The log a forked child writes at AMXBLAS_VERBOSE=1 (its call lines and, at exit, its summary),
// for the tests of the log's summary: the settings are read once per process and the summary is
// written by atexit, so each case runs its calls in a child of its own and the parent reads the
// child's file. Include after <cmocka.h> (its asserts).
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace amxblas::test {

// Runs log_calls() in a child with AMXBLAS_VERBOSE=1 and AMXBLAS_LOG set to a fresh file, and
// returns what the child wrote there.
template <typename LogCalls>
std::string child_log(LogCalls&& log_calls) {
    // mkstemp template, relative: the file goes in CTest's working directory (the test's build
    // folder) and is removed after the child's log is read.
    char path[] = "amxblas_child_log.XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("AMXBLAS_VERBOSE", "1", 1);
        setenv("AMXBLAS_LOG", path, 1);
        log_calls();
        std::exit(0);  // the summary is written by atexit
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    unlink(path);
    return ss.str();
}

}  // namespace amxblas::test

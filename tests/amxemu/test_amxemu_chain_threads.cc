// Non-AMX SIGILLs reach the program's own handler (or kill the process with SIGILL), and two
// threads with different tile states do not see each other's tiles.
#include <immintrin.h>
#include <pthread.h>
#include <ucontext.h>

#include "amxemu/amxemu.h"
#include "tests/amxemu/test_util.h"

using amxemu_test::TileCfg;

namespace {

volatile sig_atomic_t g_seen = 0;
void* g_seen_addr = nullptr;

void on_ill_siginfo(int, siginfo_t* info, void* uc_void) {
    g_seen = g_seen + 1;
    g_seen_addr = info->si_addr;
    auto* uc = static_cast<ucontext_t*>(uc_void);
    uc->uc_mcontext.gregs[REG_RIP] += 2;  // past ud2
}

sigjmp_buf g_jump;
void on_ill_plain(int) { siglongjmp(g_jump, 1); }

void ud2_reaches_program_handler(void** /*state*/) {
    struct sigaction sa {}, old {};
    sa.sa_sigaction = on_ill_siginfo;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGILL, &sa, &old), 0);
    struct sigaction now {};
    sigaction(SIGILL, nullptr, &now);
    assert_ptr_equal(reinterpret_cast<void*>(now.sa_sigaction), reinterpret_cast<void*>(on_ill_siginfo));

    amxemu_reset_counters();
    void* where = nullptr;
    __asm__ volatile("lea 0f(%%rip), %0\n\t0: ud2" : "=r"(where));
    assert_int_equal(g_seen, 1);
    assert_ptr_equal(g_seen_addr, where);
    // AMX instructions still go to the emulator with a program handler installed.
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_release();
    assert_int_equal(g_seen, 1);
    amxemu_counts c;
    amxemu_counters(&c);
    assert_int_equal(c.passed_on, 1);
    assert_int_equal(c.tilezero, 1);

    // signal() is recorded the same way; a handler may leave with siglongjmp.
    signal(SIGILL, on_ill_plain);
    if (sigsetjmp(g_jump, 1) == 0) {
        __asm__ volatile("ud2");
        fail_msg("ud2 returned");
    }
    sigaction(SIGILL, &old, nullptr);
}

// glibc's other ways to set a disposition reach the harness's record too (they call glibc's
// internal sigaction, which the sigaction interposer never sees). sigset and sigignore are
// deprecated, which is no reason for programs not to call them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
extern "C" sighandler_t bsd_signal(int, sighandler_t);  // not declared with _GNU_SOURCE

volatile sig_atomic_t g_plain_seen = 0;
void on_ill_count(int) {
    g_plain_seen = g_plain_seen + 1;
    siglongjmp(g_jump, 1);
}

// Raises one non-AMX SIGILL (ud2) that the program's handler leaves with siglongjmp, and
// checks that AMX instructions still go to the emulator.
void ud2_then_amx(void) {
    const int before = g_plain_seen;
    if (sigsetjmp(g_jump, 1) == 0) {
        __asm__ volatile("ud2");
        fail_msg("ud2 returned");
    }
    assert_int_equal(g_plain_seen, before + 1);
    amxemu_reset_counters();
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_release();
    amxemu_counts c;
    amxemu_counters(&c);
    assert_int_equal(c.tilezero, 1);
}

struct sigaction current_sigill() {
    struct sigaction now {};
    sigaction(SIGILL, nullptr, &now);
    return now;
}

void other_disposition_functions_are_recorded(void** /*state*/) {
    struct sigaction saved {};
    sigaction(SIGILL, nullptr, &saved);

    bsd_signal(SIGILL, on_ill_count);
    assert_ptr_equal(reinterpret_cast<void*>(current_sigill().sa_handler), reinterpret_cast<void*>(on_ill_count));
    assert_int_equal(current_sigill().sa_flags & SA_RESTART, SA_RESTART);
    ud2_then_amx();

    // System V: one shot, so the disposition is SIG_DFL again after one delivery.
    assert_ptr_equal(reinterpret_cast<void*>(sysv_signal(SIGILL, on_ill_count)), reinterpret_cast<void*>(on_ill_count));
    assert_int_equal(current_sigill().sa_flags & (SA_RESETHAND | SA_NODEFER), SA_RESETHAND | SA_NODEFER);
    ud2_then_amx();
    assert_true(current_sigill().sa_handler == SIG_DFL);

    // sigset installs without flags, and SIG_HOLD is recorded, not put in the signal mask: AMX
    // instructions still run while SIGILL is held.
    assert_true(sigset(SIGILL, on_ill_count) == SIG_DFL);
    assert_int_equal(current_sigill().sa_flags, 0);
    ud2_then_amx();
    assert_ptr_equal(reinterpret_cast<void*>(sigset(SIGILL, SIG_HOLD)), reinterpret_cast<void*>(on_ill_count));
    assert_true(sigset(SIGILL, SIG_HOLD) == SIG_HOLD);
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    assert_false(sigismember(&mask, SIGILL));
    TileCfg cfg;
    cfg.tile(0, 16, 64);
    tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_release();
    assert_true(sigset(SIGILL, on_ill_count) == SIG_HOLD);  // released: the handler runs again
    ud2_then_amx();

    assert_int_equal(sigignore(SIGILL), 0);
    assert_true(current_sigill().sa_handler == SIG_IGN);
    sigaction(SIGILL, &saved, nullptr);
}

// With SIGILL held (sigset) or ignored (sigignore), a non-AMX illegal instruction kills the
// process with SIGILL, as on hardware; the emulator keeps running AMX instructions up to it.
void held_or_ignored_ud2_kills_with_sigill(void** /*state*/) {
    for (int ignore = 0; ignore < 2; ++ignore) {
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (ignore) sigignore(SIGILL);
            else sigset(SIGILL, SIG_HOLD);
            TileCfg cfg;
            cfg.tile(0, 16, 64);
            tile_loadconfig(&cfg);
            _tile_zero(0);
            __asm__ volatile("ud2");
            _exit(0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGILL);
    }
}

void ud2_with_default_kills_with_sigill(void** /*state*/) {
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGILL, SIG_DFL);
        __asm__ volatile("ud2");
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGILL);
}

pthread_barrier_t g_barrier;

struct ThreadCase {
    int rows, colsb;
    uint8_t fill;
    bool ok = false;
};

void* thread_body(void* arg) {
    auto* tc = static_cast<ThreadCase*>(arg);
    TileCfg cfg;
    cfg.tile(0, tc->rows, tc->colsb).tile(1, tc->rows, tc->colsb);
    uint8_t src[16][64], out[16][64] = {};
    std::memset(src, tc->fill, sizeof(src));
    pthread_barrier_wait(&g_barrier);
    tile_loadconfig(&cfg);
    pthread_barrier_wait(&g_barrier);  // both configured
    tile_loadd(0, src, 64);
    pthread_barrier_wait(&g_barrier);  // both loaded
    _tile_zero(1);
    _tile_stored(0, out, 64);
    TileCfg back;
    tile_storeconfig(&back);
    pthread_barrier_wait(&g_barrier);
    _tile_release();
    bool ok = std::memcmp(&back, &cfg, 64) == 0;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 64; ++c) ok = ok && out[r][c] == ((r < tc->rows && c < tc->colsb) ? tc->fill : 0);
    tc->ok = ok;
    return nullptr;
}

void threads_have_their_own_tiles(void** /*state*/) {
    pthread_barrier_init(&g_barrier, nullptr, 2);
    ThreadCase a{4, 16, 0x11}, b{16, 64, 0x22};
    pthread_t ta, tb;
    pthread_create(&ta, nullptr, thread_body, &a);
    pthread_create(&tb, nullptr, thread_body, &b);
    pthread_join(ta, nullptr);
    pthread_join(tb, nullptr);
    pthread_barrier_destroy(&g_barrier);
    assert_true(a.ok);
    assert_true(b.ok);
    // The main thread never configured tiles: its state is still INIT.
    TileCfg mine;
    tile_storeconfig(&mine);
    assert_int_equal(mine.palette, 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ud2_reaches_program_handler),
        cmocka_unit_test(ud2_with_default_kills_with_sigill),
        cmocka_unit_test(other_disposition_functions_are_recorded),
        cmocka_unit_test(held_or_ignored_ud2_kills_with_sigill),
        cmocka_unit_test(threads_have_their_own_tiles),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

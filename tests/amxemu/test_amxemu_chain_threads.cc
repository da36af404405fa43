// Non-AMX SIGILLs reach the program's own handler (or kill the process with SIGILL), and two
// threads with different tile states do not see each other's tiles.
#include <immintrin.h>
#include <pthread.h>
#include <ucontext.h>

#include "tests/amxemu/amxemu.h"
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
        cmocka_unit_test(threads_have_their_own_tiles),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

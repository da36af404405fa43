// amxemu: SIGILL trap-and-emulate for AMX-TILE, AMX-BF16 and AMX-INT8 (see amxemu.h and
// README.md). This file is the trap handler, its counters and the program's own SIGILL
// disposition behind it; the decoder is amxemu_decode.cc, the tiles and the instructions'
// effects amxemu_tiles.cc, the dot products' arithmetic amxemu_bf16.cc and amxemu_int8.cc.
//
// Everything reachable from the signal handler is async-signal-safe: no malloc, no stdio, no
// locks. Messages are built in a stack buffer and written with write(2) (amxemu_message.h); a
// violation ends in abort(). Tile state is per thread, in initial-exec TLS (amxemu_tiles.cc).
#include "amxemu/amxemu.h"
#include "amxemu/amxemu_bf16.h"
#include "amxemu/amxemu_decode.h"
#include "amxemu/amxemu_message.h"
#include "amxemu/amxemu_tiles.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>
#include <xmmintrin.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace {

// ---------------------------------------------------------------------------------------------
// Counters, in the order of struct amxemu_counts: the INT8 dot products came after passed_on,
// and the traps after them, which keeps the fields of the older layouts where they were.
enum Kind : int {
    kLdtilecfg,
    kSttilecfg,
    kTilerelease,
    kTilezero,
    kTileloadd,
    kTileloaddt1,
    kTilestored,
    kTdpbf16ps,
    kPassedOn,
    kTdpbssd,
    kTdpbsud,
    kTdpbusd,
    kTdpbuud,
    kTraps,
    kKinds
};
constexpr const char* kKindNames[kKinds] = {"ldtilecfg",  "sttilecfg", "tilerelease", "tilezero",
                                            "tileloadd",  "tileloaddt1", "tilestored", "tdpbf16ps",
                                            "passed_on",  "tdpbssd",   "tdpbsud",     "tdpbusd",
                                            "tdpbuud",    "traps"};
static_assert(sizeof(amxemu_counts) == kKinds * sizeof(uint64_t), "one counter per kind");
// An instruction's counter is its Op's value (amxemu_decode.h).
using amxemu::Op;
static_assert(int(Op::ldtilecfg) == kLdtilecfg && int(Op::sttilecfg) == kSttilecfg &&
                  int(Op::tilerelease) == kTilerelease && int(Op::tilezero) == kTilezero &&
                  int(Op::tileloadd) == kTileloadd && int(Op::tileloaddt1) == kTileloaddt1 &&
                  int(Op::tilestored) == kTilestored && int(Op::tdpbf16ps) == kTdpbf16ps &&
                  int(Op::tdpbssd) == kTdpbssd && int(Op::tdpbsud) == kTdpbsud && int(Op::tdpbusd) == kTdpbusd &&
                  int(Op::tdpbuud) == kTdpbuud,
              "Op values are counter indices");

std::atomic<uint64_t> g_counts[kKinds];
bool g_print_stats = false;
// TDPBF16PS on AVX2 and FMA registers where the CPU has them (amxemu_bf16.h).
bool g_vector_runs = false;
std::atomic<bool> g_vector_arithmetic{false};  // switched by the tests while other threads trap

// ---------------------------------------------------------------------------------------------
// The handler, and the program's own SIGILL disposition behind it.
//
// The emulator must stay the SIGILL handler even when the program installs its own later
// (CMocka installs one around every test). sigaction(), signal() and glibc's other ways to set
// a disposition (bsd_signal, sysv_signal, sigset, sigignore) are interposed for SIGILL only:
// what the program installs is recorded in g_chained and gets every SIGILL that is not an
// emulated AMX instruction; what the program reads back is its own disposition.
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);
using SigignoreFn = int (*)(int);
SigactionFn g_real_sigaction = nullptr;
SignalFn g_real_signal = nullptr;
SignalFn g_real_sysv_signal = nullptr;
SignalFn g_real_sigset = nullptr;
SigignoreFn g_real_sigignore = nullptr;
bool g_installed = false;
struct sigaction g_chained;
bool g_held = false;  // sigset(SIGILL, SIG_HOLD) in effect

template <typename Fn>
void resolve_one(Fn* fn, const char* name) {
    if (!*fn) *fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void resolve_real() {
    resolve_one(&g_real_sigaction, "sigaction");
    resolve_one(&g_real_signal, "signal");
    resolve_one(&g_real_sysv_signal, "sysv_signal");
    resolve_one(&g_real_sigset, "sigset");
    resolve_one(&g_real_sigignore, "sigignore");
}

// The program's view of SIGILL: records `act` (when not null) as the chained disposition and
// returns the previous one in `old` (when not null).
void exchange_chained(const struct sigaction* act, struct sigaction* old) {
    const struct sigaction prev = g_chained;
    if (act) g_chained = *act;
    if (old) *old = prev;
}

// signal()-style: `handler` with `flags`, its own signal in the mask when `mask_self`.
// Returns the previous handler (sa_handler shares storage with sa_sigaction).
sighandler_t set_chained_handler(sighandler_t handler, int flags, bool mask_self) {
    struct sigaction next {}, prev {};
    next.sa_handler = handler;
    next.sa_flags = flags;
    sigemptyset(&next.sa_mask);
    if (mask_self) sigaddset(&next.sa_mask, SIGILL);
    exchange_chained(&next, &prev);
    return prev.sa_handler;
}

void pass_on(int sig, siginfo_t* info, void* uc) {
    g_counts[kPassedOn].fetch_add(1, std::memory_order_relaxed);
    const struct sigaction prev = g_chained;
    const bool siginfo = (prev.sa_flags & SA_SIGINFO) != 0;
    // sa_handler and sa_sigaction share storage: SIG_DFL and SIG_IGN read the same in both.
    // A held SIGILL (sigset) would be blocked: the kernel then delivers it with the default.
    if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN || g_held) {
        // A synchronous SIGILL cannot be ignored: restore the default action and return; the
        // instruction faults again and the process dies of SIGILL, with a core if enabled.
        struct sigaction def {};
        def.sa_handler = SIG_DFL;
        sigemptyset(&def.sa_mask);
        g_real_sigaction(SIGILL, &def, nullptr);
        return;
    }
    if (prev.sa_flags & SA_RESETHAND) {
        std::memset(&g_chained, 0, sizeof(g_chained));
        g_chained.sa_handler = SIG_DFL;
    }
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &prev.sa_mask, &old);
    if (siginfo) {
        prev.sa_sigaction(sig, info, uc);
    } else {
        prev.sa_handler(sig);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void on_sigill(int sig, siginfo_t* info, void* uc_void) {
    const int saved_errno = errno;  // the memory copies may set it; the program must not see it
    ucontext_t* uc = static_cast<ucontext_t*>(uc_void);
    amxemu::Insn in;
    // Only a SIGILL the CPU raised (si_code > 0: ILL_ILLOPN and the others) is an instruction to
    // emulate; one sent by kill() or tgkill() (SI_USER, SI_TKILL) is the program's.
    if (info->si_code <= 0 || !amxemu::decode(uc, &in, false)) {
        pass_on(sig, info, uc_void);
        errno = saved_errno;
        return;
    }
    // The handler starts with the default MXCSR; set it anyway: round to nearest, all
    // exceptions masked, no FTZ/DAZ (the emulation flushes by itself). The interrupted
    // context's MXCSR comes back on sigreturn.
    _mm_setcsr(0x1f80);
    g_counts[kTraps].fetch_add(1, std::memory_order_relaxed);
    // Then every emulated instruction that directly follows: the CPU would trap on it next,
    // with the same registers (tile instructions write no general register, flag or vector
    // register), so running it here changes nothing but the count of traps. A trap costs
    // about 15 us on the virtual machines the tests run on, most of the harness's time; the
    // kernels' loops issue their loads and dot products back to back (the FP32 chain's step:
    // 2 traps for its 6 instructions). An encoding the hardware rejects is left to trap by
    // itself.
    for (;;) {
        amxemu::execute(in, g_vector_arithmetic.load(std::memory_order_relaxed));
        g_counts[int(in.op)].fetch_add(1, std::memory_order_relaxed);
        uc->uc_mcontext.gregs[REG_RIP] += in.length;
        if (!amxemu::fetchable_after(uint64_t(uc->uc_mcontext.gregs[REG_RIP])) || !amxemu::decode(uc, &in, true))
            break;
    }
    errno = saved_errno;
}

void print_stats() {
    for (int k = 0; k < kKinds; ++k)
        amxemu::Msg().s("amxemu: ").s(kKindNames[k]).s("=").u(g_counts[k].load()).write_out();
}

__attribute__((constructor)) void amxemu_init() {
    resolve_real();
    if (!g_real_sigaction) {
        amxemu::Msg().s("amxemu: cannot resolve sigaction; the AMX emulator is not installed").write_out();
        return;
    }
    struct sigaction sa {};
    sa.sa_sigaction = on_sigill;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (g_real_sigaction(SIGILL, &sa, &g_chained) != 0) {
        amxemu::Msg().s("amxemu: sigaction(SIGILL) failed; the AMX emulator is not installed").write_out();
        return;
    }
    g_installed = true;
    g_vector_runs = amxemu::bf16_vector_path_runs();
    g_vector_arithmetic = g_vector_runs;
    const char* stats = getenv("AMXEMU_STATS");
    g_print_stats = stats && stats[0] == '1' && stats[1] == '\0';
}

__attribute__((destructor)) void amxemu_fini() {
    if (g_print_stats) print_stats();
}

}  // namespace

extern "C" {

AMXEMU_API int amxemu_harness_version(void) { return 1; }

AMXEMU_API void amxemu_counters(struct amxemu_counts* out) {
    uint64_t v[kKinds];
    for (int k = 0; k < kKinds; ++k) v[k] = g_counts[k].load(std::memory_order_relaxed);
    std::memcpy(out, v, sizeof(v));
}

AMXEMU_API void amxemu_reset_counters(void) {
    for (auto& c : g_counts) c.store(0, std::memory_order_relaxed);
}

AMXEMU_API void amxemu_tile_bytes(int tile, void* out) { amxemu::tile_bytes(tile, out); }

AMXEMU_API int amxemu_use_vector_arithmetic(int on) {
    g_vector_arithmetic = on && g_vector_runs;
    return g_vector_arithmetic;
}

AMXEMU_API int sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigaction(sig, act, old);
    exchange_chained(act, old);
    return 0;
}

// glibc's own disposition functions call its internal sigaction, not the interposed one, so
// each that a program may use to set SIGILL is interposed too, with glibc's flags and mask.
AMXEMU_API sighandler_t signal(int sig, sighandler_t handler) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_signal(sig, handler);
    return set_chained_handler(handler, SA_RESTART, true);
}

AMXEMU_API sighandler_t bsd_signal(int sig, sighandler_t handler) noexcept {
    return signal(sig, handler);
}

// System V semantics: one shot, the signal not blocked in its handler. Also what signal()
// is for a program compiled with -D_XOPEN_SOURCE and no _DEFAULT_SOURCE (__sysv_signal).
AMXEMU_API sighandler_t sysv_signal(int sig, sighandler_t handler) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sysv_signal(sig, handler);
    return set_chained_handler(handler, SA_RESETHAND | SA_NODEFER, false);
}

AMXEMU_API sighandler_t __sysv_signal(int sig, sighandler_t handler) noexcept {
    return sysv_signal(sig, handler);
}

AMXEMU_API int sigignore(int sig) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigignore(sig);
    set_chained_handler(SIG_IGN, 0, false);
    return 0;
}

// sigset(SIGILL, SIG_HOLD) records the hold instead of blocking SIGILL: a blocked synchronous
// SIGILL kills the process, so the emulator could not run. AMX hardware ignores the hold for
// the instructions it runs; for any other illegal instruction the hold kills the process, as
// it would there. Any other disposition releases the hold (and unblocks SIGILL, as glibc does).
AMXEMU_API sighandler_t sigset(int sig, sighandler_t disp) noexcept {
    resolve_real();
    if (sig != SIGILL || !g_installed) return g_real_sigset(sig, disp);
    if (disp == SIG_HOLD) {
        const bool was_held = g_held;
        g_held = true;
        return was_held ? SIG_HOLD : g_chained.sa_handler;
    }
    sigset_t ill, old_mask;
    sigemptyset(&ill);
    sigaddset(&ill, SIGILL);
    pthread_sigmask(SIG_UNBLOCK, &ill, &old_mask);
    const bool was_held = g_held || sigismember(&old_mask, SIGILL);
    g_held = false;
    const sighandler_t prev = set_chained_handler(disp, 0, false);
    return was_held ? SIG_HOLD : prev;
}

}  // extern "C"

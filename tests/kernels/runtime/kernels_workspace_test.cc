// The workspace pool (kernels/runtime/workspace.h): reuse across calls, bounds on what it keeps,
// whole huge pages for large workspaces, concurrent leases, the cap, and reuse by the emulated
// GEMM itself. And the FP32 pack's
// streaming stores (used for buffers larger than the last-level cache): the same bytes. And the
// per-participant slots of the parallel reductions (kernels/runtime/per_participant.h): cache lines,
// reused from call to call, so that a warm call takes no page fault.
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/pack/pack.h"
#include "kernels/runtime/per_participant.h"
#include "kernels/runtime/workspace.h"
#include "kernels/driver/routed_gemm.h"
#include "tests/kernels/kernels_test_util.h"

using namespace amxblas::kernels;

namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;

void test_reuse_same_size(void**) {
    workspace_pool_trim();
    void* first = nullptr;
    {
        WorkspaceLease w;
        assert_null(lease_workspace(kMiB, 0, &w));
        first = w.data();
        assert_non_null(first);
        assert_true(reinterpret_cast<std::uintptr_t>(first) % 64 == 0);
    }
    const WorkspacePoolStats before = workspace_pool_stats();
    assert_int_equal(before.idle_buffers, 1);
    WorkspaceLease again;
    assert_null(lease_workspace(kMiB - 100, 0, &again));  // smaller: the idle one fits
    assert_ptr_equal(again.data(), first);
    const WorkspacePoolStats after = workspace_pool_stats();
    assert_int_equal(after.reused, before.reused + 1);
    assert_int_equal(after.idle_buffers, 0);
}

void test_bigger_request_supersedes_smaller_idle(void**) {
    workspace_pool_trim();
    { WorkspaceLease w; assert_null(lease_workspace(kMiB, 0, &w)); }
    { WorkspaceLease w; assert_null(lease_workspace(3 * kMiB, 0, &w)); }
    // The 1 MiB buffer was freed when the 3 MiB one was allocated; only the latter is kept (as
    // two whole 2 MiB pages).
    const WorkspacePoolStats s = workspace_pool_stats();
    assert_int_equal(s.idle_buffers, 1);
    assert_int_equal(s.idle_bytes, 4 * kMiB);
}

// An arena serves its thread's leases from its own bytes, last in first out, 64-byte aligned,
// without the pool; a lease it cannot hold, another thread's and any after it go to the pool.
void test_arena_carves_its_threads_leases(void**) {
    workspace_pool_trim();
    std::vector<char> bytes(kMiB + 64);
    char* base = bytes.data() + (64 - reinterpret_cast<std::uintptr_t>(bytes.data()) % 64) % 64;
    const WorkspacePoolStats before = workspace_pool_stats();
    const auto inside = [&](const WorkspaceLease& w, std::size_t n) {
        const char* p = static_cast<const char*>(w.data());
        return p >= base && p + n <= base + kMiB && reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
    };
    {
        WorkspaceArena arena(base, kMiB);
        WorkspaceLease first;
        assert_null(lease_workspace(100, 0, &first));
        assert_ptr_equal(first.data(), base);
        {
            WorkspaceLease second;
            assert_null(lease_workspace(kMiB / 2, 0, &second));
            assert_true(inside(second, kMiB / 2));
            assert_ptr_equal(second.data(), base + 128);
            WorkspaceLease too_big;  // does not fit what is left: from the pool
            assert_null(lease_workspace(kMiB / 2, 0, &too_big));
            assert_false(inside(too_big, 1));
            bool other_inside = true;
            std::thread other([&] {
                WorkspaceLease w;
                other_inside = lease_workspace(64, 0, &w) != nullptr || inside(w, 1);
            });
            other.join();
            assert_false(other_inside);
        }
        WorkspaceLease again;  // second's bytes are free again
        assert_null(lease_workspace(kMiB / 2, 0, &again));
        assert_ptr_equal(again.data(), base + 128);
    }
    WorkspaceLease after;
    assert_null(lease_workspace(64, 0, &after));
    assert_false(inside(after, 1));
    const WorkspacePoolStats s = workspace_pool_stats();
    assert_int_equal(s.fresh + s.reused, before.fresh + before.reused + 3);  // too_big, other's, after
}

// From 1 MiB on a workspace is whole 2 MiB pages, 2 MiB aligned (one page fault per 2 MiB where
// transparent huge pages are on); below, or where whole pages would pass the cap, it is the
// bytes asked for, 64-byte aligned.
void test_large_workspace_is_whole_huge_pages(void**) {
    struct Case {
        std::size_t bytes, cap, kept;
    };
    const Case cases[] = {
        {kMiB - 64, 0, kMiB - 64},               // below 1 MiB: as asked
        {kMiB, 0, 2 * kMiB},                     // 1 MiB: one 2 MiB page
        {3 * kMiB + 1, 0, 4 * kMiB},             // two pages
        {3 * kMiB / 2, 7 * kMiB / 4, 3 * kMiB / 2},  // a 2 MiB page would pass the cap: as asked
        {3 * kMiB / 2, 2 * kMiB, 2 * kMiB},      // it fits the cap exactly
    };
    for (const Case& c : cases) {
        workspace_pool_trim();
        {
            WorkspaceLease w;
            assert_null(lease_workspace(c.bytes, c.cap, &w));
            const auto at = reinterpret_cast<std::uintptr_t>(w.data());
            assert_int_equal(at % (c.kept % (2 * kMiB) == 0 ? 2 * kMiB : 64), 0);
            std::memset(w.data(), 1, c.bytes);
        }
        const WorkspacePoolStats s = workspace_pool_stats();
        assert_int_equal(s.idle_buffers, 1);
        assert_int_equal(s.idle_bytes, c.kept);
    }
}

void test_cap_bounds_request_and_what_is_kept(void**) {
    workspace_pool_trim();
    WorkspaceLease over;
    assert_string_equal(lease_workspace(5 * kMiB + 1, 5 * kMiB, &over), "memory:workspace-cap");
    assert_null(over.data());
    {
        WorkspaceLease a, b;
        assert_null(lease_workspace(2 * kMiB, 5 * kMiB / 2, &a));
        assert_null(lease_workspace(2 * kMiB, 5 * kMiB / 2, &b));
        assert_ptr_not_equal(a.data(), b.data());
    }
    // Two 2 MiB buffers came back under a 2.5 MiB cap: one was freed.
    const WorkspacePoolStats s = workspace_pool_stats();
    assert_int_equal(s.idle_buffers, 1);
    assert_true(s.idle_bytes <= 5 * kMiB / 2);
}

void test_concurrent_leases_are_distinct(void**) {
    workspace_pool_trim();
    constexpr int kThreads = 6, kRounds = 200;
    std::vector<int> bad(kThreads, 0);
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
        ts.emplace_back([t, &bad] {
            for (int r = 0; r < kRounds; ++r) {
                WorkspaceLease w;
                const std::size_t bytes = (64 << 10) * (1 + (t + r) % 3);
                if (lease_workspace(bytes, 0, &w) != nullptr) { bad[t] = 1; return; }
                auto* p = static_cast<unsigned char*>(w.data());
                std::memset(p, t + 1, bytes);
                std::this_thread::yield();
                for (std::size_t q = 0; q < bytes; q += 4093)
                    if (p[q] != t + 1) bad[t] = 1;  // another lease wrote into this one
            }
        });
    for (auto& th : ts) th.join();
    for (int t = 0; t < kThreads; ++t) assert_int_equal(bad[t], 0);
    assert_true(workspace_pool_stats().idle_buffers <= kIdleSlots);
}

void test_gemm_reuses_its_workspace(void**) {
    workspace_pool_trim();
    const int n = 96;
    std::vector<float> a = kt::random_matrix<float>(std::size_t(n) * n, 1), b = kt::random_matrix<float>(std::size_t(n) * n, 2);
    std::vector<float> c1(std::size_t(n) * n), c2(std::size_t(n) * n);
    const RunOptions o = kt::options();
    assert_null(emulate_sgemm({'N', 'N', n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c1.data(), n}, o));
    const WorkspacePoolStats s1 = workspace_pool_stats();
    assert_null(emulate_sgemm({'N', 'N', n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c2.data(), n}, o));
    const WorkspacePoolStats s2 = workspace_pool_stats();
    assert_int_equal(s2.reused, s1.reused + 1);
    assert_int_equal(s2.fresh, s1.fresh);
    assert_memory_equal(c1.data(), c2.data(), c1.size() * sizeof(float));  // a reused buffer changes nothing
}

void test_streamed_pack_is_identical(void**) {
    const SplitKernels& sk = split_kernels();
    const int shapes[][2] = {{64, 96}, {70, 45}, {33, 130}};
    for (char trans : {'N', 'T'})
        for (bool is_a : {true, false})
            for (const auto& sh : shapes) {
                const int rows = sh[0], cols = sh[1];
                const std::vector<float> x = kt::random_matrix<float>(std::size_t(rows) * cols, 7);
                const OperandView<float> v{trans, rows, cols, x.data(), trans == 'N' ? rows : cols};
                const int outer = is_a ? rows : cols, k = is_a ? cols : rows;
                const std::size_t elems = packed_slice_elems(outer, k);
                bf16_t* buf[2];
                for (int t = 0; t < 2; ++t) {
                    buf[t] = static_cast<bf16_t*>(aligned_alloc(64, elems * kFp32Slices * sizeof(bf16_t)));
                    std::memset(buf[t], 0xA5, elems * kFp32Slices * sizeof(bf16_t));
                    PackedOperand out;
                    out.slices = kFp32Slices;
                    out.panels = round_up_tile(outer) / kTile;
                    out.ksteps = round_up_tile(k) / kTile;
                    out.stream = t == 1;
                    for (int s = 0; s < kFp32Slices; ++s) out.slice[s] = buf[t] + s * elems;
                    (is_a ? pack_a_fp32 : pack_b_fp32)(v, out, sk, 2);
                }
                assert_memory_equal(buf[0], buf[1], elems * kFp32Slices * sizeof(bf16_t));
                free(buf[0]);
                free(buf[1]);
            }
    assert_true(streaming_threshold_bytes() >= (std::size_t(1) << 20));
}

struct alignas(kCacheLine) Slot {
    double mx = 0;
    bool flag = false;
};

void test_per_participant_slots_are_lines_reused(void**) {
    for (int n = 1; n <= 9; ++n) {
        [[maybe_unused]] const void* first = nullptr;
        for (int round = 0; round < 3; ++round) {
            PerParticipant<Slot> part(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i) {
                assert_int_equal(reinterpret_cast<std::uintptr_t>(&part[i]) % kCacheLine, 0);
                assert_true(part[i].mx == 0 && !part[i].flag);  // value-initialised
                part[i].mx = i;
            }
            // The same block again for the same size: what keeps a warm call off fresh pages.
            // (Not under AddressSanitizer, whose allocator holds freed blocks in quarantine.)
            if (round == 0) first = part.data();
#if !defined(__SANITIZE_ADDRESS__)
            else if (part.data() != first) fail_msg("size %d: a new block %p, not %p again", n, part.data(), first);
#endif
        }
    }
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Warm routed calls (one thread: the faults counted are the call's own) touch no fresh page:
// the workspace comes from the pool and every temporary from memory the earlier calls freed.
// Before per_participant.h, the FP64 split's reductions took fresh heap on calls 2 to about 8.
[[maybe_unused]] void test_warm_calls_take_no_page_fault(void**) {  // unused under ASan
    const int n = 200;
    const std::vector<double> a = kt::random_matrix<double>(std::size_t(n) * n, 3),
                              b = kt::random_matrix<double>(std::size_t(n) * n, 4);
    std::vector<double> c(std::size_t(n) * n);
    const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<float> cf(c.size());
    for (int products : {6, 21, kFp64Auto}) {
        const RunOptions o = kt::options(products, 1);
        const GemmArgs<double> g{'N', 'T', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n};
        const GemmArgs<float> gf{'N', 'T', n, n, n, 1.f, af.data(), n, bf.data(), n, 0.f, cf.data(), n};
        assert_null(amxblas::kernels::emulate_gemm(g, o));  // the first calls: pool, stack
        assert_null(amxblas::kernels::emulate_gemm(gf, o));
        const long before = minor_faults();
        for (int call = 0; call < 12; ++call) {
            assert_null(amxblas::kernels::emulate_gemm(g, o));
            assert_null(amxblas::kernels::emulate_gemm(gf, o));
        }
        const long faults = minor_faults() - before;
        if (faults != 0) print_message("FP64 products %d: %ld page faults in 12 warm calls\n", products, faults);
        assert_int_equal(faults, 0);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    // --page-faults: the page-fault case alone, in a process of its own (CTest's
    // kernels_workspace_test.page_faults): the other cases' freed memory would hide fresh-heap
    // allocations. Under AddressSanitizer it reports itself skipped (exit 77), not passed: ASan's
    // allocator keeps freed blocks in quarantine and hands out fresh ones, so faults are by design.
    if (argc > 1 && std::strcmp(argv[argc - 1], "--page-faults") == 0) {
#if defined(__SANITIZE_ADDRESS__)
        std::printf("# skipped under AddressSanitizer (its allocator never reuses at once)\n");
        return 77;
#else
        const struct CMUnitTest faults[] = {cmocka_unit_test(test_warm_calls_take_no_page_fault)};
        return cmocka_run_group_tests(faults, nullptr, nullptr);
#endif
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_same_size),
        cmocka_unit_test(test_bigger_request_supersedes_smaller_idle),
        cmocka_unit_test(test_arena_carves_its_threads_leases),
        cmocka_unit_test(test_large_workspace_is_whole_huge_pages),
        cmocka_unit_test(test_cap_bounds_request_and_what_is_kept),
        cmocka_unit_test(test_concurrent_leases_are_distinct),
        cmocka_unit_test(test_gemm_reuses_its_workspace),
        cmocka_unit_test(test_streamed_pack_is_identical),
        cmocka_unit_test(test_per_participant_slots_are_lines_reused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

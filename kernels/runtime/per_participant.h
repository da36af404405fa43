// Per-participant partial results of one parallel phase (a reduction's maxima, flags, counts),
// each participant's slot on a cache line of its own, so that participants do not write to
// one line.
//
// Why not std::vector<T> of an alignas(64) T: C++17 allocates an over-aligned T with the
// aligned operator new, which glibc serves with memalign, and glibc 2.36 (Debian 12) never
// hands a memalign'ed chunk that was freed back to the next memalign while it sits in the
// thread's cache of freed chunks. So each routed call took its few partial arrays from fresh
// heap above the last call's, until the cache filled (about 7 calls), and every fresh 4 KiB
// page was a page fault inside a call (about 10 us on the development VM, scripts/bench.sh's
// "touch_us"): the second routed call of a process paid for one or two. A plain operator new of
// the same size is served from that cache, call after call, from the same memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace amxblas::kernels {

constexpr std::size_t kCacheLine = 64;

// Aligns to kCacheLine by hand inside a plain operator new block one line larger; the block's
// own address is kept just below the aligned pointer (the gap is at least the 16 bytes by
// which operator new aligns, room for one pointer).
template <typename T>
struct CacheLineAllocator {
    using value_type = T;
    static_assert(alignof(T) <= kCacheLine, "a slot cannot be aligned beyond a cache line");

    CacheLineAllocator() = default;
    template <typename U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        void* raw = ::operator new(n * sizeof(T) + kCacheLine);
        const std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(raw) + kCacheLine) & ~std::uintptr_t(kCacheLine - 1);
        reinterpret_cast<void**>(at)[-1] = raw;
        return reinterpret_cast<T*>(at);
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(reinterpret_cast<void**>(p)[-1]); }

    template <typename U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
    template <typename U>
    bool operator!=(const CacheLineAllocator<U>&) const noexcept { return false; }
};

// One slot per participant: declare T alignas(kCacheLine) (so sizeof(T) is a whole number of
// lines) and size the vector with the participant count.
template <typename T>
using PerParticipant = std::vector<T, CacheLineAllocator<T>>;

}  // namespace amxblas::kernels

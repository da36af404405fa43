// Every forward reason and threads note the library prints, in one place.
//
// The names are the log's reason= and note= fields and the README's reason tables;
// they are part of the user interface: keep them stable. Each is an inline constexpr array,
// so every translation unit that names one gets the same address.
// tests/policy/test_reasons.cc checks that README.md documents exactly the names of
// all_reasons().
#pragma once

#include <cstddef>

namespace amxblas::reason {

// decide(): the call itself, the configuration, the machine.
inline constexpr char args_invalid[] = "args:invalid";
inline constexpr char size_empty[] = "size:empty";
inline constexpr char size_too_large[] = "size:too-large";
inline constexpr char size_k_zero[] = "size:k-zero";
inline constexpr char alpha_zero[] = "alpha:zero";
inline constexpr char fp32_disabled[] = "fp32:disabled";
inline constexpr char fp64_disabled[] = "fp64:disabled";
inline constexpr char shape_not_square[] = "shape:not-square";
inline constexpr char size_below_min_n[] = "size:below-min-n";
inline constexpr char backend_no_amx[] = "backend:no-amx";
inline constexpr char backend_no_avx512_bf16[] = "backend:no-avx512-bf16";
// The unusable_reason of a backend every machine runs (kernels/backends.def): no reason.
inline constexpr const char* none = nullptr;

// The domain scan (policy/domain.h).
inline constexpr char domain_nonfinite_scalar[] = "domain:nonfinite-scalar";
inline constexpr char domain_nonfinite[] = "domain:nonfinite";
inline constexpr char domain_subnormal[] = "domain:subnormal";
inline constexpr char domain_too_large[] = "domain:too-large";
inline constexpr char domain_too_small[] = "domain:too-small";
inline constexpr char domain_slice_subnormal[] = "domain:slice-subnormal";
inline constexpr char domain_overflow_risk[] = "domain:overflow-risk";
inline constexpr char domain_underflow_risk[] = "domain:underflow-risk";

// Returned by the kernels (kernels/emulated_gemm.h) after the policy routed the call; listed
// here so that the table and its test cover them ("domain:slice-subnormal" above is shared:
// the policy's pre-check and the split's exact check report the same condition).
inline constexpr char backend_not_built[] = "backend:not-built";
inline constexpr char backend_not_runnable[] = "backend:not-runnable";
inline constexpr char domain_slice_overflow[] = "domain:slice-overflow";
inline constexpr char memory_workspace_cap[] = "memory:workspace-cap";
inline constexpr char memory_alloc_failed[] = "memory:alloc-failed";

// Threads notes (Decision::threads_note): the call was routed with fewer threads.
inline constexpr char threads_in_parallel_region[] = "threads:in-parallel-region";
inline constexpr char threads_concurrent_calls[] = "threads:concurrent-calls";
inline constexpr char threads_above_cores[] = "threads:above-cores";

}  // namespace amxblas::reason

namespace amxblas {

// forward: the call went to the real BLAS; beta_scale: the shim set C := BETA*C itself
// (route beta-scale); note: a threads note of a routed call.
enum class ReasonKind { forward, beta_scale, note };

struct ReasonEntry {
    const char* name;
    ReasonKind kind;
};

// All names above, in the order decide() and the scans test them, notes last.
const ReasonEntry* all_reasons(std::size_t* count);

}  // namespace amxblas

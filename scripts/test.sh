#!/bin/sh
# Sets up, builds and runs every test: ./scripts/test.sh [extra ctest arguments]
# Installs missing Debian packages first (as root), builds in ./build, runs the whole suite.
# Then the sanitizer step: builds ./build-asan with AddressSanitizer and UndefinedBehavior-
# Sanitizer (-DAMXBLAS_SANITIZE=address,undefined) and runs the policy, kernels, shim and fuzz
# tests there; a finding fails the test. AMXBLAS_TEST_SANITIZE=0 skips that step, except in CI
# (CI=true), where it always runs.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" "$@"

sanitize=${AMXBLAS_TEST_SANITIZE:-1}
if [ "$sanitize" = 0 ] && [ "${CI:-}" = true ]; then
    echo "test.sh: CI=true: the sanitizer step runs although AMXBLAS_TEST_SANITIZE=0"
    sanitize=1
fi
if [ "$sanitize" = 0 ]; then
    echo "test.sh: sanitizer step skipped (AMXBLAS_TEST_SANITIZE=0)"
    exit 0
fi
start=$(date +%s)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMXBLAS_SANITIZE=address,undefined
cmake --build build-asan -j"$jobs"
ctest --test-dir build-asan --output-on-failure -j"$jobs" "$@"
echo "test.sh: sanitizer step (build and tests in build-asan) took $(($(date +%s) - start)) s"

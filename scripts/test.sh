#!/bin/sh
# Sets up, builds and runs every test: ./scripts/test.sh [extra ctest arguments]
# Installs missing Debian packages first (as root), builds in ./build, runs the whole suite.
# Then the sanitizer step: builds ./build-asan with AddressSanitizer and UndefinedBehavior-
# Sanitizer (-DAMXBLAS_SANITIZE=address,undefined) and runs the policy, kernels, shim and fuzz
# tests there; a finding fails the test. AMXBLAS_TEST_SANITIZE=0 skips that step, except in CI
# (CI=true), where it always runs.
# Each step starts with a banner and ends with its ten slowest tests; the last line gives both
# steps' passed/failed/skipped counts.
# The exit status is non-zero when a build or a test of either step failed.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

# run_ctest DIR [ARGS...]: ctest in DIR, its output shown as it comes and kept in
# DIR/test-sh-ctest.log; sets counts ("P passed, F failed, S skipped") and ctest_rc.
run_ctest() {
    dir=$1
    shift
    rm -f "$dir/test-sh-ctest.rc"
    { ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@" || echo $? > "$dir/test-sh-ctest.rc"; } 2>&1 |
        tee "$dir/test-sh-ctest.log"
    ctest_rc=$(cat "$dir/test-sh-ctest.rc" 2>/dev/null || echo 0)
    # "67% tests passed, 1 tests failed out of 3"; skipped tests count as passed there and are
    # listed as "(Skipped)" under "The following tests did not run:".
    total=$(sed -n 's/.*tests passed, [0-9]* tests* failed out of \([0-9]*\).*/\1/p' "$dir/test-sh-ctest.log" | tail -n 1)
    failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests* failed out of .*/\1/p' "$dir/test-sh-ctest.log" | tail -n 1)
    skipped=$(grep -c '^[[:space:]]*[0-9]* - .* (Skipped)$' "$dir/test-sh-ctest.log" || true)
    total=${total:-0} failed=${failed:-0}
    counts="$((total - failed - skipped)) passed, $failed failed, $skipped skipped"
    if [ "$ctest_rc" != 0 ] && [ "$failed" = 0 ]; then
        counts="$counts (ctest exited $ctest_rc)"
    fi
    # The ten slowest tests, from the result lines ("12/218 Test  #7: name ...   Passed   3.21 sec"):
    # where the step's time went, the first place to look when the suite grows slower.
    echo "test.sh: the ten slowest tests in $dir:"
    sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1/p' "$dir/test-sh-ctest.log" |
        sort -rn | head -n 10 | awk '{ printf "  %8.1f s  %s\n", $1, $2 }'
}

echo "== test.sh: main suite: build in ./build, all tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
run_ctest build "$@"
main_counts=$counts main_rc=$ctest_rc

sanitize=${AMXBLAS_TEST_SANITIZE:-1}
if [ "$sanitize" = 0 ] && [ "${CI:-}" = true ]; then
    echo "test.sh: CI=true: the sanitizer step runs although AMXBLAS_TEST_SANITIZE=0"
    sanitize=1
fi
asan_rc=0
if [ "$main_rc" != 0 ]; then
    asan_counts="not run (the main suite failed)"
elif [ "$sanitize" = 0 ]; then
    echo "test.sh: sanitizer step skipped (AMXBLAS_TEST_SANITIZE=0)"
    asan_counts="skipped (AMXBLAS_TEST_SANITIZE=0)"
else
    echo
    echo "== test.sh: sanitizer step: build in ./build-asan (address,undefined), its tests"
    start=$(date +%s)
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMXBLAS_SANITIZE=address,undefined
    cmake --build build-asan -j"$jobs"
    run_ctest build-asan "$@"
    asan_counts="$counts, $(($(date +%s) - start)) s" asan_rc=$ctest_rc
    echo "test.sh: sanitizer step (build and tests in build-asan) took $(($(date +%s) - start)) s"
fi

status=PASS
if [ "$main_rc" != 0 ] || [ "$asan_rc" != 0 ]; then status=FAIL; fi
echo
echo "test.sh: $status: main suite: $main_counts; sanitizer step: $asan_counts"
[ "$status" = PASS ]

# Helpers shared by the integration-test drivers (sourced, POSIX sh). A test exits 0 when it
# passed, 1 when it failed and 77 (CTest SKIP_RETURN_CODE) when something it needs is missing.

skip() {
    printf 'SKIP: %s\n' "$*"
    exit 77
}

fail() {
    printf 'FAIL: %s\n' "$*"
    exit 1
}

# The backend that routes on this machine: $AMXBLAS_TEST_BACKEND if set, else avx512 when the
# library says this machine runs it ($AMXBLAS_TEST_BACKENDS_HERE, set by CMakeLists.txt to
# tests/common's amxblas_backends_here), else the portable reference kernels. AMX is never
# assumed.
test_backend() {
    if [ -n "${AMXBLAS_TEST_BACKEND:-}" ]; then
        printf '%s\n' "$AMXBLAS_TEST_BACKEND"
    elif "${AMXBLAS_TEST_BACKENDS_HERE:?is set by tests/programs/CMakeLists.txt}" | grep -qx avx512; then
        printf 'avx512\n'
    else
        printf 'reference\n'
    fi
}

# numpy_setup AMXBLAS_RUN LIBRARY SCRIPT OUTDIR N: the NumPy tests' arguments and set-up. Sets
# run, script, out (emptied), n, py (Debian's python3) and backend (test_backend), exports
# AMXBLAS_LIBRARY; skips without python3 or its numpy.
numpy_setup() {
    run=$1 script=$3 out=$4 n=$5
    export AMXBLAS_LIBRARY=$2
    py=/usr/bin/python3
    [ -x "$py" ] || skip "$py not found (Debian package python3)"
    "$py" -c 'import numpy' 2>/dev/null || skip "numpy is not importable by $py (Debian package python3-numpy)"
    fresh_dir "$out"
    backend=$(test_backend)
}

# fresh_dir DIR: an empty DIR (logs are appended to, so old ones must go).
fresh_dir() {
    rm -rf "$1"
    mkdir -p "$1"
}

# The per-call lines of LOG for ROUTINE with m = n = k = N.
calls_of() {
    grep -E "amxblas: routine=$2 .* m=$3 n=$3 k=$3 " "$1" || true
}

# expect_routed LOG ROUTINE N ROUTE: every ROUTINE call of order N in LOG took ROUTE, and
# there was at least one. On failure, prints what the log says instead.
expect_routed() {
    log=$1 routine=$2 order=$3 route=$4
    [ -f "$log" ] || fail "no log $log was written"
    lines=$(calls_of "$log" "$routine" "$order")
    [ -n "$lines" ] || fail "$log has no $routine call with m=n=k=$order; it has:
$(grep 'amxblas: ' "$log" | head -20)"
    others=$(printf '%s\n' "$lines" | grep -v " route=$route " || true)
    [ -z "$others" ] || fail "$routine calls of order $order in $log were not all route=$route:
$others"
    printf 'ok: %s: %s call(s) of %s m=n=k=%s took route=%s\n' "$log" \
        "$(printf '%s\n' "$lines" | wc -l)" "$routine" "$order" "$route"
}

#!/bin/sh
# setup-deps.sh: installs the Debian/Ubuntu packages amxblas needs, those not installed yet.
#
#   scripts/setup-deps.sh              the project's full list (build, tests, demo)
#   scripts/setup-deps.sh PKG...       only these
#   scripts/setup-deps.sh --list       print the full list and exit
#
# As root it runs apt-get update and apt-get install for the missing ones; otherwise it names
# them and exits 1. Used by scripts/demo.sh and scripts/test.sh.
#
# It never removes a package: an entry A|B|C is satisfied by any of A, B or C already
# installed (A is installed when none is), and apt-get runs with --no-remove, so it stops
# rather than remove anything (gnuplot-nox conflicts with an installed gnuplot-qt, say).
set -eu

# Build: compilers, CMake, OpenBLAS (the real BLAS), CMocka (unit tests), binutils (nm, for
# the exported-symbols test).
# Integration tests and demo: gfortran and the plain BLAS (-lblas; libblas-dev also brings
# netlib's libblas.so.3 for the re-entry tests), the netlib Level-3 testers (libblas-test),
# NumPy for /usr/bin/python3, ScaLAPACK and Open MPI, gnuplot for amxblas-report --plot and the
# benchmark's plots, and the ILP64 BLAS (Debian's OpenBLAS64 and -lblas64) for the 64-bit-integer
# interface tests; valgrind, whose CPU has no AVX-512, for the test of the library without it
# (tests/fuzz/without_avx512.sh).
full_list="cmake make g++ gcc pkg-config binutils libopenblas-dev libcmocka-dev gfortran
libblas-dev libblas-test python3 python3-numpy libscalapack-openmpi-dev openmpi-bin
gnuplot-nox|gnuplot-qt|gnuplot-x11|gnuplot libopenblas64-pthread-dev libblas64-dev valgrind"

if [ "${1:-}" = --list ]; then
    printf '%s\n' $full_list
    exit 0
fi
if [ $# -eq 0 ]; then
    # Word splitting of the list is intended.
    # shellcheck disable=SC2086
    set -- $full_list
fi

installed() {
    dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed
}

missing=
for entry in "$@"; do
    found=no
    # shellcheck disable=SC2086
    for pkg in $(printf '%s\n' "$entry" | tr '|' ' '); do
        if installed "$pkg"; then found=yes; break; fi
    done
    [ "$found" = yes ] || missing="$missing ${entry%%|*}"
done
missing=${missing# }
if [ -z "$missing" ]; then
    echo "setup-deps: all $# package(s) installed"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "setup-deps: missing packages: $missing" >&2
    echo "setup-deps: as root, run: apt-get update && apt-get install -y --no-remove $missing" >&2
    exit 1
fi
echo "setup-deps: installing $missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends --no-remove $missing

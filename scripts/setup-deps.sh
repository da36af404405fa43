#!/bin/sh
# Installs the Debian packages the project needs, if any is missing.
#   scripts/setup-deps.sh            the full list (build, tests, demo, benchmark)
#   scripts/setup-deps.sh PKG...     only these
# As root it runs apt-get update and apt-get install; otherwise it names what is missing
# and exits 1, so nothing is half-installed behind the user's back.
set -eu

if [ $# -gt 0 ]; then
    packages="$*"
else
    packages="cmake make g++ gfortran pkg-config binutils libopenblas-dev libblas-dev
              libblas-test libcmocka-dev python3 python3-numpy libscalapack-openmpi-dev
              openmpi-bin gnuplot-nox"
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "amxblas: missing Debian packages:$missing" >&2
    echo "install them with: sudo apt-get install$missing" >&2
    exit 1
fi
echo "amxblas: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing

#!/bin/sh
# Sets up, builds and runs every test: ./scripts/test.sh [extra ctest arguments]
# Installs missing Debian packages first (as root), builds in ./build, runs the whole suite.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" "$@"

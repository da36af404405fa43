#!/bin/sh
# demo.sh: one command from a fresh Debian/Ubuntu checkout to a routed run and its report.
#   1. installs the packages it needs (as root; otherwise names the missing ones, exit 1),
#   2. configures and builds libamxblas.so (cmake -S . -B build),
#   3. builds tests/programs/gemm_check.f90, an ordinary Fortran program linked with -lblas
#      only, and runs it under scripts/amxblas-run with routing forced onto a backend this CPU
#      runs (amx, else avx512 with AVX-512 BF16, else the slow portable reference kernels), as
#      the library's own detector says (tests/common's amxblas_backends_here): order 128
#      is forwarded (below --min-n), orders 256 and 512 are routed,
#   4. shows its log lines and the amxblas-report table.
# Usage: scripts/demo.sh      (outputs in build/demo/)
set -eu
cd "$(dirname "$0")/.."

scripts/setup-deps.sh cmake make g++ gcc libopenblas-dev libcmocka-dev gfortran libblas-dev python3

echo "== building (cmake -S . -B build)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"

demo=build/demo
rm -rf "$demo"
mkdir -p "$demo"
gfortran -O2 -o "$demo/gemm_check" tests/programs/gemm_check.f90 -lblas

# The backend, as the library itself decides what runs here (tests/common/backends_here.cc):
# amx on AMX hardware, else avx512 with AVX-512 BF16, else the portable reference kernels.
here=$(build/tests/common/amxblas_backends_here)
backend=reference
for b in avx512 amx; do
    if printf '%s\n' "$here" | grep -qx "$b"; then backend=$b; fi
done
echo
echo "== running gemm_check 128 256 512 under amxblas-run (backend $backend)"
set -x
AMXBLAS_LIBRARY=build/shim/libamxblas.so scripts/amxblas-run --backend "$backend" \
    --fp64-products 21 --fp32 on --min-n 256 --verbose 2 --log "$demo/gemm_check.log" \
    -- "$demo/gemm_check" 128 256 512
{ set +x; } 2>/dev/null

echo
echo "== its log, $demo/gemm_check.log"
cat "$demo/gemm_check.log"
echo
echo "== scripts/amxblas-report $demo/gemm_check.log"
scripts/amxblas-report "$demo/gemm_check.log"

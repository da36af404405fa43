#!/bin/sh
# demo.sh: one command from a fresh Debian/Ubuntu checkout to a routed run and its report.
#   1. installs the packages it needs (as root; otherwise names the missing ones, exit 1),
#   2. configures and builds libamxblas.so and the backend detector only (not the tests),
#   3. builds tests/programs/gemm_check.f90, an ordinary Fortran program linked with -lblas
#      only, and runs it twice at the same orders (256 and 512, each twice, so the second round
#      is warm): under scripts/amxblas-run with routing forced onto a backend this CPU runs
#      (amx, else avx512 with AVX-512 BF16, else the slow portable reference kernels, as the
#      library's own detector says: tests/common's amxblas_backends_here), and under the same
#      launcher with routing off, so every call goes to the real BLAS,
#   4. shows the routed run's log and amxblas-report table, then the warm calls of both runs
#      side by side, and says plainly what the comparison means on this machine.
# Usage: scripts/demo.sh      (outputs in build/demo/)
set -eu
cd "$(dirname "$0")/.."

scripts/setup-deps.sh cmake make g++ gcc libopenblas-dev libcmocka-dev gfortran libblas-dev python3

echo "== building libamxblas.so (cmake -S . -B build; targets amxblas, amxblas_backends_here)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target amxblas amxblas_backends_here

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
orders="256 512 256 512"
echo
echo "== running gemm_check $orders under amxblas-run, routed (backend $backend)"
set -x
AMXBLAS_LIBRARY=build/shim/libamxblas.so scripts/amxblas-run --backend "$backend" --shapes square \
    --fp64-products 21 --fp32 on --verbose 2 --log "$demo/gemm_check.log" \
    -- "$demo/gemm_check" $orders
{ set +x; } 2>/dev/null
echo
echo "== the same, with routing off: every call goes to the real BLAS"
set -x
AMXBLAS_LIBRARY=build/shim/libamxblas.so scripts/amxblas-run --fp64-products 0 --fp32 off \
    --verbose 2 --log "$demo/gemm_check.real.log" -- "$demo/gemm_check" $orders > /dev/null
{ set +x; } 2>/dev/null

echo
echo "== the routed run's log, $demo/gemm_check.log"
cat "$demo/gemm_check.log"
echo
echo "== scripts/amxblas-report $demo/gemm_check.log"
scripts/amxblas-report "$demo/gemm_check.log"

echo
echo "== warm calls (the second of each order), same program, same orders: routed vs the real BLAS"
# Fields of a per-call line: routine=... transa=X transb=Y m=N ... time_us=T. The last line of
# each routine, transposes and order is the warm one.
warm_times() {
    sed -n 's/^amxblas: routine=\([a-z_]*\) .* transa=\(.\) transb=\(.\) m=\([0-9]*\) .* time_us=\([0-9.]*\) .*/\1 \2\3 \4 \5/p' "$1"
}
{ warm_times "$demo/gemm_check.log" | sed 's/^/routed /'; warm_times "$demo/gemm_check.real.log" | sed 's/^/real /'; } |
    awk -v backend="$backend" '
        { t[$1 " " $2 " " $3 " " $4] = $5; if (!(($2 " " $3 " " $4) in seen)) { seen[$2 " " $3 " " $4] = 1; keys[n++] = $2 " " $3 " " $4 } }
        END {
            printf "%-8s %-3s %5s  %12s  %12s  %s\n", "routine", "op", "N", "routed_ms", "real_ms", "routed time / real time"
            slower = 0
            for (i = 0; i < n; i++) {
                r = t["routed " keys[i]]; b = t["real " keys[i]]
                if (r == "" || b == "") continue
                split(keys[i], k, " ")
                printf "%-8s %-3s %5d  %12.2f  %12.2f  %24.1fx\n", k[1], k[2], k[3], r / 1000, b / 1000, r / b
                if (r > b) slower = 1
            }
            printf "(routed: backend %s; real: the program'"'"'s own BLAS)\n", backend
            if (backend != "amx")
                printf "\nThis CPU has no AMX, so the routed calls ran the emulation on the %s backend\n" \
                       "(%s), which exists to test the library and study its accuracy:\n" \
                       "it computes what AMX would, and is slower than the real BLAS here. The speed-up\n" \
                       "the library is for needs AMX (by default it routes only where AMX runs, and\n" \
                       "only calls its cost model predicts to gain: amxblas-run --explain).\n", backend, (backend == "avx512" ? "AVX-512 BF16 instructions" : "portable scalar code")
            else if (slower)
                print "\nSome routed calls were slower than the real BLAS at these orders."
        }'

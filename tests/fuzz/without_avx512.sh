#!/bin/sh
# The library on an x86-64 without AVX-512 and AMX, checked on any machine, AVX-512 ones
# included. Valgrind's CPU (VEX, 3.19) has no AVX-512 or AMX: the CPUID it shows the program
# lacks them, and an AVX-512 or AMX instruction the program still executes is one valgrind
# cannot translate, which it delivers as SIGILL. So a file built with AVX-512 flags whose code
# runs before its run-time check, or without one, kills the program here as it would on an AMD
# EPYC Zen 2 (seen: the benchmark's peak section, 29b4968). Tool "none": no checking, only
# the translation; --memcheck: memcheck (also on VEX's CPU), which adds reads of uninitialised
# memory, which the sanitizer step does not look for, to what fails the test (but not those
# inside OpenBLAS: openblas.supp).
#
#   without_avx512.sh BACKENDS_HERE LIBRARY [--memcheck] [--expect REGEX]... -- PROGRAM ARGS...
#
# BACKENDS_HERE: tests/common's amxblas_backends_here, run under valgrind first; where valgrind
# shows this CPU's AVX-512 BF16 or AMX anyway, or there is no valgrind, the test is skipped
# (exit 77): it could not check what it is for. PROGRAM runs under valgrind with
# LD_PRELOAD=LIBRARY and the AMXBLAS_* environment of the caller, logging to a fresh file;
# each --expect REGEX (extended) must match at least one line of that log.
set -u
backends_here=$1 lib=$2
shift 2
expects= memcheck=0
while [ $# -gt 0 ]; do
    case $1 in
        --expect) expects="$expects
$2"; shift 2 ;;
        --memcheck) memcheck=1; shift ;;
        --) shift; break ;;
        *) echo "without_avx512.sh: unknown option $1"; exit 2 ;;
    esac
done
command -v valgrind >/dev/null 2>&1 || { echo "SKIPPED: no valgrind (Debian package valgrind)"; exit 77; }
vg="valgrind -q --tool=none --trace-children=yes"

here=$($vg "$backends_here") || { echo "FAILED: amxblas_backends_here under valgrind"; exit 1; }
echo "backends the library runs under valgrind: $(echo $here)"
case " $(echo $here) " in
    *" avx512 "*|*" amx "*) echo "SKIPPED: valgrind shows AVX-512 BF16 or AMX here"; exit 77 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/amxblas.log
# env runs under valgrind too (--trace-children), so that valgrind itself is not preloaded.
run=$vg
[ "$memcheck" = 1 ] && run="valgrind -q --tool=memcheck --error-exitcode=99 --trace-children=yes
    --suppressions=$(dirname "$0")/openblas.supp"
$run env LD_PRELOAD="$lib" AMXBLAS_LOG="$log" "$@"
rc=$?
[ "$rc" = 99 ] && { echo "FAILED: memcheck found an error (above)"; exit 1; }
[ "$rc" = 0 ] || { echo "FAILED: exit status $rc (132 or 'unhandled instruction' above: SIGILL)"; exit 1; }
touch "$log"
fail=0
echo "$expects" | while IFS= read -r re; do
    [ -n "$re" ] || continue
    n=$(grep -c -E -- "$re" "$log")
    echo "log lines matching '$re': $n"
    [ "$n" -gt 0 ] || echo "CHECK FAILED" >>"$work/failed"
done
[ -f "$work/failed" ] && fail=1
exit $fail

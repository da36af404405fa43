#!/bin/bash
# amxblas-replay on malformed .gemm files: each gives one clear error line naming the file and
# what is wrong, none makes a BLAS call or crashes, the well-formed file among them is still
# replayed, and the exit status is 1; usage errors exit with 2.
# Usage: malformed_test.sh REPLAY GOOD_FILE
set -u
replay=$1 good=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
problem() { echo "CHECK FAILED: $*"; fail=1; }

# A small valid DGEMM (2 x 2 x 2, 12 doubles) to cut and bend: header, then A, B, C.
values() { head -c $((8 * $1)) /dev/zero; }
header='dgemm N N 2 2 2 1 0 2 2 0 0 2'
cases=()
bad() {  # bad NAME EXPECTED-TEXT: the file's content comes on stdin
    cat > "$work/$1"
    cases+=("$1" "$2")
}
bad empty "empty file" < <(:)
bad no_newline "no header line: the file has no newline" < <(printf 'dgemm N N 2 2 2 1 0 2 2 0 0 2')
bad long_line "no header line: no newline in the first 1024 bytes" < <({ head -c 2000 /dev/zero | tr '\0' 'x'; printf '\n'; })
bad eleven_fields "the header has 12 fields, expected 13" < <({ echo 'dgemm N N 2 2 2 1 0 2 2 0 0'; values 12; })
bad routine "unknown routine 'xgemm'" < <({ echo 'xgemm N N 2 2 2 1 0 2 2 0 0 2'; values 12; })
bad transa "TRANSA is 'X' (N, T or C)" < <({ echo 'dgemm X N 2 2 2 1 0 2 2 0 0 2'; values 12; })
bad transb "TRANSB is 'NN' (N, T or C)" < <({ echo 'dgemm N NN 2 2 2 1 0 2 2 0 0 2'; values 12; })
bad negative "M is '-2' (decimal digits, at most 2147483647)" < <({ echo 'dgemm N N -2 2 2 1 0 2 2 0 0 2'; values 12; })
bad beyond_int "K is '2147483648'" < <({ echo 'dgemm N N 2 2 2147483648 1 0 2 2 0 0 2'; values 12; })
bad empty_c "M = 0, N = 2: C has no entries, there is nothing to replay" < <({ echo 'dgemm N N 0 2 2 1 0 2 2 0 0 2'; values 4; })
bad small_lda "LDA = 1 is below the rows of the stored A (2)" < <({ echo 'dgemm N N 2 2 2 1 0 1 2 0 0 2'; values 12; })
bad small_ldb "LDB = 2 is below the rows of the stored B (3)" < <({ echo 'dgemm N T 2 3 2 1 0 2 2 0 0 2'; values 14; })
bad small_ldc "LDC = 1 is below M = 2" < <({ echo 'dgemm N N 2 2 2 1 0 2 2 0 0 1'; values 12; })
bad real_alpha_im "dgemm has real scalars: alpha_im and beta_im must be 0" < <({ echo 'dgemm N N 2 2 2 1 0.5 2 2 0 0 2'; values 12; })
bad scalar "alpha_re is '1x' (a number)" < <({ echo 'dgemm N N 2 2 2 1x 0 2 2 0 0 2'; values 12; })
bad truncated "truncated: the header describes 96 bytes of matrices, the file holds 88" < <({ echo "$header"; values 11; })
bad trailing "1 bytes after the 96 bytes of matrices the header describes" < <({ echo "$header"; values 12; printf 'x'; })
bad complex_short "truncated: the header describes 192 bytes of matrices, the file holds 96" < <({ echo 'zgemm N N 2 2 2 1 0 2 2 0 0 2'; values 12; })
bad huge "truncated: the header describes" < <({ echo 'dgemm N N 2147483647 2147483647 2147483647 1 0 2147483647 2147483647 0 0 2147483647'; values 12; })

args=()
for ((i = 0; i < ${#cases[@]}; i += 2)); do args+=("$work/${cases[$i]}"); done
args+=("$work/missing.gemm" "$good")
"$replay" "${args[@]}" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/out" "$work/err"
[ $rc -eq 1 ] || problem "exit status $rc, expected 1"
for ((i = 0; i < ${#cases[@]}; i += 2)); do
    grep -qF "amxblas-replay: error: $work/${cases[$i]}: ${cases[$((i + 1))]}" "$work/err" ||
        problem "no error line for ${cases[$i]} saying: ${cases[$((i + 1))]}"
done
grep -qF "amxblas-replay: error: $work/missing.gemm: cannot open: No such file or directory" "$work/err" ||
    problem "no error line for a missing file"
[ "$(grep -c '^amxblas-replay: error: ' "$work/err")" -eq $((${#cases[@]} / 2 + 1)) ] ||
    problem "expected one error line per bad file"
[ "$(grep -c " error=.* bound=.* checksum=" "$work/out")" -eq 1 ] ||
    problem "the well-formed file was not replayed"

# Usage errors: status 2 and a message.
"$replay" > "$work/u1" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no file given" "$work/u1" || problem "no argument: status $rc, $(head -1 "$work/u1")"
"$replay" --bogus "$good" > "$work/u2" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option --bogus" "$work/u2" || problem "unknown option: status $rc"
"$replay" --against-openblas --openblas /nonexistent/libopenblas.so "$good" > "$work/u3" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "error: --against-openblas: cannot load /nonexistent/libopenblas.so" "$work/u3" ||
    problem "an OpenBLAS that cannot be loaded: status $rc, $(cat "$work/u3")"
"$replay" --help | grep -q "^Usage: amxblas-replay" || problem "--help prints no usage"
[ ${#cases[@]} -eq 38 ] || problem "$((${#cases[@]} / 2)) malformed files made, expected 19"
[ $fail -eq 0 ] && echo "ok: $((${#cases[@]} / 2 + 1)) malformed files refused with a clear message, usage errors exit 2"
exit $fail

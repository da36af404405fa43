#!/bin/sh
# scripts/setup-deps.sh never removes a package: any installed gnuplot variant satisfies the
# gnuplot entry, and apt-get is asked to install with --no-remove. dpkg-query, apt-get and id
# are stand-ins on PATH, so nothing is installed and no root is needed.
# Usage: setup_deps_test.sh SETUP_DEPS OUTDIR
set -eu
. "$(dirname "$0")/lib.sh"
setup=$1 out=$2
fresh_dir "$out"
mkdir "$out/bin"
# Installed: gnuplot-qt and cmake only.
cat > "$out/bin/dpkg-query" <<'STUB'
#!/bin/sh
for a; do pkg=$a; done
case $pkg in gnuplot-qt | cmake) printf installed ;; *) exit 1 ;; esac
STUB
cat > "$out/bin/apt-get" <<STUB
#!/bin/sh
echo "apt-get \$*" >> "$out/apt.txt"
STUB
printf '#!/bin/sh\necho 0\n' > "$out/bin/id"
chmod +x "$out/bin/"*
PATH=$out/bin:$PATH

PATH=$PATH "$setup" cmake 'gnuplot-nox|gnuplot-qt|gnuplot-x11|gnuplot' > "$out/1.txt" 2>&1 ||
    fail "gnuplot-qt installed did not satisfy the gnuplot entry: $(cat "$out/1.txt")"
[ ! -e "$out/apt.txt" ] || fail "apt-get ran although everything was installed: $(cat "$out/apt.txt")"
"$setup" --list | grep -qx 'gnuplot-nox|gnuplot-qt|gnuplot-x11|gnuplot' ||
    fail "the full list does not accept every gnuplot variant"
echo "ok: an installed gnuplot-qt satisfies the gnuplot entry; nothing installed, nothing removed"

"$setup" cmake 'valgrind' > "$out/2.txt" 2>&1 || fail "setup-deps failed: $(cat "$out/2.txt")"
grep -q '^apt-get install .*--no-remove.* valgrind$' "$out/apt.txt" ||
    fail "apt-get install was not run with --no-remove: $(cat "$out/apt.txt")"
echo "ok: a missing package is installed with apt-get install --no-remove"

#!/bin/sh
# unless_amx.sh BACKENDS_HERE COMMAND...: runs COMMAND, or reports itself skipped (exit 77) on a
# machine that runs the amx backend, for tests that ask for a backend the machine cannot run.
# BACKENDS_HERE: tests/common's amxblas_backends_here (the library's own view of the machine).
if "$1" | grep -qx amx; then
    echo "SKIP: this machine runs the amx backend"
    exit 77
fi
shift
exec "$@"

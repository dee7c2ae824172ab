#!/usr/bin/env bash
# Pass-through recorder for a solver that a client starts by name:
#   record-session.sh REAL_SOLVER DIR ARGS...
# runs REAL_SOLVER ARGS... on the client's stdin and stdout unchanged, and appends everything the
# client sends to DIR/<solver name>-<PID>.smt2, one file per solver process (the PID is the real
# solver's: this script execs it), whose first line is a comment with the command line:
#   ;; argv: /path/to/z3 -t:120000 -memory:8192 -smt2 -in
# To put it under a client that runs `z3`, make a directory first on PATH holding an executable `z3`:
#   #!/bin/sh
#   exec /path/to/scripts/record-session.sh /path/to/real/z3 /tmp/sessions "$@"
# (REAL_SOLVER must be the real binary, not that wrapper or a pyenv shim that finds it again.)
# The files replay with `smtproxy replay DIR/*.smt2`.
set -euo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
real=$1
dir=$2
shift 2

mkdir -p "$dir"
file=$dir/$(basename "$real")-$$.smt2
{
    printf ';; argv: %q' "$real"
    printf ' %q' "$@"
    printf '\n'
} >"$file"
exec "$real" "$@" < <(exec tee -a "$file")

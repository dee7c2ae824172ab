#!/usr/bin/env bash
# Records the sessions pySMT's own test suite (the modules scripts/test-pysmt.sh runs) opens with
# ONE generic SMT-LIB solver: one file per solver process, as scripts/record-session.sh writes them.
#   bash scripts/record-pysmt.sh z3|yices|cvc5 DIR
# The solver is the real binary (pyenv shims resolved); DIR gets a bin/ with the recording wrapper
# and s/<solver>-<PID>.smt2, one per pySMT solver instance (print-success on, one query or a few).
# Replay them as pySMT drives them with scripts/drive-sessions.py.
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup
root=$(pwd)
solver=${1:?solver: z3, yices or cvc5}
dir=$(mkdir -p "${2:?directory}" && cd "$2" && pwd)
case $solver in
    z3) name=z3 args='"-in", "-smt2"' ;;
    yices) name=yices-smt2 args='"--incremental"' ;;
    cvc5) name=cvc5 args='"--incremental", "--lang", "smt2"' ;;
    *) echo "record-pysmt: unknown solver $solver" >&2; exit 2 ;;
esac
real=$(smtproxy_real_solver "$name" /dev/null record-pysmt)
if ! python3 -c 'import pysmt, pytest, pytest_timeout' >/dev/null 2>&1; then
    bash scripts/install-deps.sh
fi
site=$(python3 -c 'import os, pysmt; print(os.path.dirname(os.path.dirname(pysmt.__file__)))')
mapfile -t paths < <(smtproxy_pysmt_modules)
mkdir -p "$dir/bin" "$dir/s"
printf '#!/bin/sh\nexec %s %s %s "$@"\n' "$root/scripts/record-session.sh" "$real" "$dir/s" >"$dir/bin/$solver"
chmod +x "$dir/bin/$solver"
( cd "$site" && PYTHONPATH="$root/tests/pysmt" PYSMT_GENERIC_CMD="[\"$dir/bin/$solver\", $args]" \
    PYSMT_GENERIC_NAME=generic timeout 900 python3 -m pytest -p smtproxy_pysmt_plugin -p no:cacheprovider \
    -q --timeout 20 "${paths[@]}" 2>&1 | tail -n 1 ) || true
echo "record-pysmt: $(find "$dir/s" -name '*.smt2' | wc -l) sessions in $dir/s"

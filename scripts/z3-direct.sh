#!/usr/bin/env bash
# Direct baseline (DESIGN.md "Corpus formats"): feed a recorded log straight into `z3 -in`, with every
# `(exit)` line replaced by `(reset)` so the records run as one session, and time it.
#
#   bash scripts/z3-direct.sh LOG [LOG...]      LOG may be .smt2 or .smt2.gz
#
# z3's responses go to stdout; "<log>: <wall seconds> s" goes to stderr for each log.
# Set Z3=/path/to/z3 to pick a binary (default: z3 on PATH).
# Exit status: non-zero if reading the log failed or z3 died. z3 exits 1 whenever it printed an
# (error ...), which KLEE logs always cause (get-value after an unsat check-sat), so 1 is not a failure.
set -euo pipefail

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_path_setup

if [ $# -eq 0 ]; then
    echo "usage: z3-direct.sh LOG [LOG...]" >&2
    exit 2
fi
z3=${Z3:-z3}
command -v "$z3" >/dev/null 2>&1 || { echo "z3-direct.sh: $z3 not found (bash scripts/install-deps.sh --solvers-only)" >&2; exit 1; }

rc=0
for log in "$@"; do
    [ -r "$log" ] || { echo "z3-direct.sh: cannot read $log" >&2; exit 1; }
    case "$log" in
        *.gz) reader=(gzip -dc -- "$log") ;;
        *) reader=(cat -- "$log") ;;
    esac
    start=$(date +%s.%N)
    set +e
    "${reader[@]}" | sed -E 's/^[[:space:]]*\(exit\)[[:space:]]*$/(reset)/' | "$z3" -in
    status=("${PIPESTATUS[@]}")
    set -e
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" -v l="$log" 'BEGIN {printf "%s: %.3f s\n", l, e - s}' >&2
    if [ "${status[0]}" -ne 0 ]; then rc=${status[0]}; fi
    if [ "${status[1]}" -ne 0 ]; then rc=${status[1]}; fi
    if [ "${status[2]}" -gt 1 ]; then rc=${status[2]}; fi
done
exit "$rc"

#!/usr/bin/env bash
# How much of the store's reuse a bounded store keeps: replays the shipped KLEE corpus twice
# through an unbounded store, then twice through one capped at a quarter of the first one's
# size (all its files: the SQLite file, its log and index, the trie beside it; SQLITE_ONLY=1
# takes the SQLite file's size alone, a bound four to six times tighter on KLEE logs, whose
# trie is the larger part), and compares the solver checks the second runs still needed (and
# their store hits: disk_hits, component lookups the file answered).
#
#   bash scripts/store-bound.sh            [FRACTION (default 0.25)] [LOG ...]
#
# LOGs (default: every KLEE solver-queries and all-queries log) replace the corpus, e.g.
# smt2-corpus/external/*.smt2*. CAP_BYTES=N caps the second store at N bytes instead (a
# bound fixed in bytes, to compare builds whose stores differ in size).
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup
frac=${1:-0.25}
shift || true
bin=${SMTPROXY_BIN:-${CARGO_TARGET_DIR:-target}/release/smtproxy}
[ -x "$bin" ] || cargo build --release
if [ $# -gt 0 ]; then
    logs=("$@")
else
    logs=(smt2-corpus/klee/*/solver-queries.smt2.gz smt2-corpus/klee/*/all-queries.smt2.gz)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # STORE MB JSON
    "$bin" replay --check --quiet --solver z3 --cache "$1" --cache-max-mb "$2" --json "$3" "${logs[@]}" 2>/dev/null
}
run "$tmp/u.sqlite3" 0 "$tmp/u1.json"
run "$tmp/u.sqlite3" 0 "$tmp/u2.json"
# The store's size with its log checkpointed into it (a close leaves a small log in place).
settle() { python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$1"; }
settle "$tmp/u.sqlite3"
# Every file of a store (the log and its index may be gone after the checkpoint).
store_size() { for f in "$1" "$1-wal" "$1-shm" "$1.trie"; do if [ -e "$f" ]; then stat -c %s "$f"; fi; done | awk '{s += $1} END {print s}'; }
sqlite_size=$(stat -c %s "$tmp/u.sqlite3")
if [ -n "${SQLITE_ONLY:-}" ]; then size=$sqlite_size; else size=$(store_size "$tmp/u.sqlite3"); fi
cap=$(python3 -c "print(${CAP_BYTES:-$size * $frac} / 1048576)")
run "$tmp/c.sqlite3" "$cap" "$tmp/c1.json"
run "$tmp/c.sqlite3" "$cap" "$tmp/c2.json"
settle "$tmp/c.sqlite3"
python3 - "$tmp" "$size" "$cap" "$sqlite_size" "$(store_size "$tmp/c.sqlite3")" <<'PY'
import json, os, sys
tmp, size, cap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sqlite_size, capped_all = int(sys.argv[4]), int(sys.argv[5])
def tot(f):
    d = json.load(open(os.path.join(tmp, f)))
    runs = d["runs"] if "runs" in d else [d]  # one log: the run itself
    return {k: sum(r[k] for r in runs) for k in ("queries", "disk_hits", "solver_checks", "expected_mismatches")}
u1, u2, c1, c2 = (tot(f) for f in ("u1.json", "u2.json", "c1.json", "c2.json"))
capped = os.path.getsize(os.path.join(tmp, "c.sqlite3"))
print(f"unbounded store: {size} bytes (its SQLite file {sqlite_size}); capped at {cap:.4f} MiB = "
      f"{int(cap * 1048576)} bytes: all its files {capped_all} bytes, the SQLite file {capped}")
print(f"second run, unbounded: disk_hits {u2['disk_hits']}, solver_checks {u2['solver_checks']} (first run {u1['solver_checks']})")
print(f"second run, capped:    disk_hits {c2['disk_hits']}, solver_checks {c2['solver_checks']} (first run {c1['solver_checks']})")
# The reuse a bound keeps is the solver checks the second run still saves. Store hits alone do
# not measure it: the trie file beside the store (its share of the bound is a twentieth)
# answers most of an uncapped second run without a lookup, and a capped one looks up more.
print(f"solver checks saved kept: "
      f"{(c1['solver_checks'] - c2['solver_checks']) / max(1, u1['solver_checks'] - u2['solver_checks']):.1%}; "
      f"store hits capped/uncapped: {c2['disk_hits'] / max(1, u2['disk_hits']):.1%}")
print(f"mismatches: {sum(r['expected_mismatches'] for r in (u1, u2, c1, c2))}")
PY

#!/usr/bin/env bash
# easy-smt's own test suite and examples (crates.io, easy-smt 0.3.2, pinned in scripts/easy-smt/;
# cargo fetches its source), run with the real solvers and with smtproxy placed under their names
# first on PATH (easy-smt starts `z3 -smt2 -in -v:0`, `z3 -smt2 -in` and
# `cvc5 --quiet --lang=smt2 --incremental`; those command lines reach smtproxy unchanged):
#   solver    the real z3 and cvc5
#   hybrid    `z3` = smtproxy --solver REAL_Z3 --cache none ARGS..., `cvc5` likewise
#   stack     the same with --strategy stack
# Each run: `cargo test` of the crate (its tests/ and unit tests) and its two examples (sudoku,
# quantifiers), whose stdout must equal the real solver's run's. Prints a table and the tests whose
# outcome differs; exits non-zero unless every smtproxy run passes exactly the tests the real
# solvers pass, the examples print the same, and the real solvers pass at least 8 tests (so a broken
# set-up cannot pass vacuously). About a minute after the first build of the crate.
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup
root=$(pwd)
bin=$(smtproxy_bin)
real_z3=$(smtproxy_real_solver z3 "$bin" test-easy-smt)
real_cvc5=$(smtproxy_real_solver cvc5 "$bin" test-easy-smt)

manifest=$root/scripts/easy-smt/Cargo.toml
src=$(cargo metadata --quiet --format-version 1 --manifest-path "$manifest" \
    | python3 -c 'import json,sys; m=json.load(sys.stdin); print(next(p["manifest_path"] for p in m["packages"] if p["name"]=="easy-smt"))')
src=$(dirname "$src")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-easy-smt.XXXXXX")
keep=0
trap '[ "$keep" -eq 1 ] || rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/easy-smt"
chmod -R u+w "$tmp/easy-smt"
# A workspace of its own, so cargo does not look for one above the temp dir.
grep -q '^\[workspace\]' "$tmp/easy-smt/Cargo.toml" || printf '\n[workspace]\n' >>"$tmp/easy-smt/Cargo.toml"
export CARGO_TARGET_DIR=$tmp/target
( cd "$tmp/easy-smt" && cargo test --quiet --no-run --examples --tests --lib >/dev/null 2>"$tmp/build.log" ) \
    || { keep=1; echo "test-easy-smt: building easy-smt's tests failed; see $tmp/build.log" >&2; exit 1; }

# run NAME STRATEGY|-   Runs the suite and the examples with z3 and cvc5 on PATH as NAME says.
run() {
    local name=$1 strategy=$2 dir=$tmp/$1
    smtproxy_place_solver "$dir/bin" z3 "$real_z3" "$strategy" "$bin"
    smtproxy_place_solver "$dir/bin" cvc5 "$real_cvc5" "$strategy" "$bin"
    (
        cd "$tmp/easy-smt"
        export PATH=$dir/bin:$PATH
        timeout 300 cargo test --tests --lib -- --test-threads 2 >"$dir/test.log" 2>&1 || true
        for ex in sudoku quantifiers; do
            timeout 120 cargo run --quiet --example "$ex" >"$dir/$ex.out" 2>"$dir/$ex.err" \
                || echo "exit $?" >>"$dir/$ex.out"
        done
    )
}
run solver - &
run hybrid hybrid &
run stack stack &
wait

python3 - "$tmp" <<'PY'
import re, sys
tmp = sys.argv[1]
def results(name):
    r = {}
    for line in open(f"{tmp}/{name}/test.log", errors="replace"):
        m = re.match(r"test (\S+) \.\.\. (ok|FAILED|ignored)", line)
        if m:
            r[m.group(1)] = {"ok": "pass", "FAILED": "fail", "ignored": "skip"}[m.group(2)]
    return r
ref = results("solver")
ok = True
def count(r):
    return {k: sum(1 for v in r.values() if v == k) for k in ("pass", "fail", "skip")}
c = count(ref)
print(f"solver: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped (z3, cvc5)")
if c["pass"] < 8:
    print("test-easy-smt: the real solvers pass fewer than 8 tests; the set-up is broken")
    print(open(f"{tmp}/solver/test.log").read()[-3000:])
    ok = False
for name in ("hybrid", "stack"):
    r = results(name)
    c = count(r)
    print(f"{name + ':':7} {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped (smtproxy --strategy {name})")
    worse = sorted(t for t, v in ref.items() if v == "pass" and r.get(t) != "pass")
    for t in worse:
        print(f"  REGRESSION ({name}): passes with the solver, {r.get(t, 'missing')} through smtproxy: {t}")
    if worse:
        ok = False
        print(open(f"{tmp}/{name}/test.log").read()[-3000:])
    for ex in ("sudoku", "quantifiers"):
        want = open(f"{tmp}/solver/{ex}.out").read()
        got = open(f"{tmp}/{name}/{ex}.out").read()
        if not want.strip() or "exit" in want:
            print(f"  example {ex}: the real solver's run failed: {want[-500:]!r}")
            ok = False
        elif got != want:
            print(f"  example {ex} ({name}): output differs from the real solver's:\n--- solver\n{want}--- smtproxy\n{got}")
            ok = False
        else:
            print(f"  example {ex} ({name}): same output as the solver ({len(want.splitlines())} lines)")
print("test-easy-smt: OK" if ok else "test-easy-smt: FAILED")
sys.exit(0 if ok else 1)
PY
rc=$?
[ "$rc" -eq 0 ] || keep=1
exit "$rc"

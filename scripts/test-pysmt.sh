#!/usr/bin/env bash
# pySMT's own test suite (the solver-using modules) with ONE generic SMT-LIB solver registered
# (pySMT's native bindings hidden), run three ways in parallel:
#   z3        z3 -in -smt2
#   hybrid    smtproxy -in -smt2 --solver z3 --cache none           (default strategy)
#   stack     smtproxy -in -smt2 --solver z3 --cache none --strategy stack
#   portfolio smtproxy -in -smt2 --solver z3,yices --cache none   (z3 faces pySMT, yices races it)
# Prints pass/fail counts for each; exits non-zero if a smtproxy run passes fewer tests than
# z3 or any test passes with z3 but not through smtproxy. Each test has a 20 s limit
# (pytest-timeout), so a hang counts as a failure instead of stopping the run.
# Installs pysmt, pytest, pytest-timeout (PyPI) when missing. Needs target/release/smtproxy
# (or $SMTPROXY_BIN); builds it if missing.
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup
root=$(pwd)

target_dir=${CARGO_TARGET_DIR:-$root/target}
bin=${SMTPROXY_BIN:-$target_dir/release/smtproxy}
[ -x "$bin" ] || cargo build --release --quiet

if ! python3 -c 'import pysmt, pytest, pytest_timeout' >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check --no-input pysmt pytest pytest-timeout 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --no-input --break-system-packages pysmt pytest pytest-timeout
fi
site=$(python3 -c 'import os, pysmt; print(os.path.dirname(os.path.dirname(pysmt.__file__)))')

mapfile -t paths < <(smtproxy_pysmt_modules)

out=$(mktemp -d "${TMPDIR:-/tmp}/test-pysmt.XXXXXX")
trap 'rm -rf "$out"' EXIT

run() { # NAME CMD-JSON
    ( cd "$site" && PYTHONPATH="$root/tests/pysmt" PYSMT_GENERIC_CMD="$2" PYSMT_GENERIC_NAME=generic \
        timeout 600 python3 -m pytest -p smtproxy_pysmt_plugin -p no:cacheprovider -q --timeout 20 \
        --junitxml "$out/$1.xml" "${paths[@]}" >"$out/$1.log" 2>&1 ) || true
}
run z3 '["z3", "-in", "-smt2"]' &
run hybrid "[\"$bin\", \"-in\", \"-smt2\", \"--solver\", \"z3\", \"--cache\", \"none\"]" &
run stack "[\"$bin\", \"-in\", \"-smt2\", \"--solver\", \"z3\", \"--cache\", \"none\", \"--strategy\", \"stack\"]" &
wait # then the portfolio: four pytest runs at once on 2 cores push slow tests past their limit
run portfolio "[\"$bin\", \"-in\", \"-smt2\", \"--solver\", \"z3,yices\", \"--cache\", \"none\"]"

python3 - "$out" <<'PY'
import sys, xml.etree.ElementTree as ET
out = sys.argv[1]
def results(name):
    r = {}
    try:
        root = ET.parse(f"{out}/{name}.xml").getroot()
    except Exception as e:
        print(f"{name}: no results ({e}); log tail:")
        print(open(f"{out}/{name}.log").read()[-2000:])
        return None
    for tc in root.iter("testcase"):
        tid = f"{tc.get('classname')}::{tc.get('name')}"
        kinds = {c.tag for c in tc}
        r[tid] = "skip" if "skipped" in kinds else "fail" if kinds & {"failure", "error"} else "pass"
    return r
ref = results("z3")
ok = ref is not None
def count(r):
    return {k: sum(1 for v in r.values() if v == k) for k in ("pass", "fail", "skip")}
if ref:
    c = count(ref); print(f"z3:     {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped")
for name in ("hybrid", "stack", "portfolio"):
    r = results(name)
    if r is None or ref is None:
        ok = False
        continue
    c = count(r)
    how = "--solver z3,yices" if name == "portfolio" else f"--strategy {name}"
    print(f"{name + ':':10} {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped (smtproxy {how})")
    worse = sorted(t for t, v in ref.items() if v == "pass" and r.get(t) != "pass")
    better = sorted(t for t, v in r.items() if v == "pass" and ref.get(t) != "pass")
    for t in worse:
        print(f"  REGRESSION ({name}): passes with z3, {r.get(t, 'missing')} through smtproxy: {t}")
    for t in better:
        print(f"  note ({name}): passes through smtproxy but not with z3: {t}")
    if worse or c["pass"] < count(ref)["pass"]:
        ok = False
print("test-pysmt: OK" if ok else "test-pysmt: FAILED")
sys.exit(0 if ok else 1)
PY

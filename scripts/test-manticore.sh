#!/usr/bin/env bash
# Manticore 0.3.7's own solver tests (../shared/clients/manticore-0.3.7/test_smtlibv2.py beside the
# repository; third-party, copied only into a temp dir at run time), run with the real solver and
# with smtproxy placed under the solver's name first on PATH; Manticore's command line reaches
# smtproxy unchanged, behind smtproxy's own options:
#   z3           the Z3 classes (ExpressionPropertiesTest, ExpressionTest: 63 tests), real z3
#   z3-hybrid    the same, `z3` = smtproxy --solver REAL_Z3 --strategy hybrid --cache none ARGS...
#   z3-stack     the same, --strategy stack
#   z3-portfolio the same, --solver REAL_Z3,REAL_YICES (a portfolio behind Manticore's z3 command
#                line: z3 faces the client, yices races it)
#   yices, yices-hybrid, yices-stack
#                the classes whose setUp takes YicesSolver (ExpressionTestYices: 61 tests) and
#                PortfolioSolver (which picks yices-smt2 alone when no cvc4 or boolector is on PATH;
#                60 tests: its test_ConstraintsForking takes 5 minutes even with the real yices, as
#                Manticore polls the portfolio's output with growing sleeps) the same way with yices-smt2
# Manticore keeps ONE solver instance per process whatever class asks (SingletonMixin), so each
# solver's classes run in a pytest process of their own. Prints a table (run, passed, failed,
# skipped) and the tests whose outcome differs. Exits non-zero unless every smtproxy run passes
# exactly the tests the real solver passes, and the real solver passes at least 50 in each family
# (so a broken install cannot pass vacuously). Each test has a 300 s limit (pytest-timeout): the
# slowest, test_ConstraintsForking, takes ~100 s with z3 (Manticore polls the solver's output with
# growing sleeps), and Manticore spins forever if its solver dies. About 4 minutes in all.
# Installs the Manticore venv (scripts/install-deps.sh) when missing. Needs target/release/smtproxy
# (or $SMTPROXY_BIN); builds it if missing. Failed runs keep their logs (path printed).
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup
smtproxy_manticore_env
root=$(pwd)

test_file=$root/../shared/clients/manticore-0.3.7/test_smtlibv2.py
if [ ! -f "$test_file" ]; then
    echo "test-manticore: $test_file not found (the project's shared/ directory must be beside the repository)" >&2
    exit 1
fi

bin=$(smtproxy_bin)

venv=$(smtproxy_manticore_venv)
if ! "$venv/bin/python" -c 'import manticore.core.smtlib, pytest, pytest_timeout' >/dev/null 2>&1; then
    bash scripts/install-deps.sh
fi

real_z3=$(smtproxy_real_solver z3 "$bin" test-manticore)
real_yices=$(smtproxy_real_solver yices-smt2 "$bin" test-manticore)

# Classes by the solver their setUp takes (Z3: every class that takes no other solver).
classes_using() {
    awk -v pat="$1" '/^class /{c = $2; sub(/\(.*/, "", c)} $0 ~ pat {print c}' "$test_file"
}
mapfile -t yices_classes < <(classes_using 'YicesSolver[.]instance[(][)]')
if ! command -v cvc4 >/dev/null 2>&1 && ! command -v boolector >/dev/null 2>&1; then
    while read -r c; do
        yices_classes+=("$c and not test_ConstraintsForking")
    done < <(classes_using 'PortfolioSolver[.]instance[(][)]')
fi
mapfile -t other_classes < <(classes_using '(Yices|CVC4|Boolector|Portfolio)Solver[.]instance[(][)]')
z3_filter=""
if [ ${#other_classes[@]} -gt 0 ]; then
    z3_filter="not ($(printf '%s\n' "${other_classes[@]}" | paste -sd'|' - | sed 's/|/ or /g'))"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-manticore.XXXXXX")
keep=0
trap '[ "$keep" -eq 1 ] || rm -rf "$tmp"' EXIT

# run NAME SOLVER_NAME REAL_SOLVER STRATEGY|- SELECTION...   One pytest process per SELECTION: a class
# name, or a -k expression over the whole file (has a space), or "" for the whole file.
# STRATEGY "-": the real solver itself (a symlink) under SOLVER_NAME.
run() {
    local name=$1 solver=$2 real=$3 strategy=$4 i=0 sel start=$SECONDS
    shift 4
    smtproxy_place_solver "$tmp/$name/bin" "$solver" "$real" "$strategy" "$bin"
    for sel in "$@"; do
        i=$((i + 1))
        local work=$tmp/$name/work$i args
        mkdir -p "$work"
        cp "$test_file" "$work/"
        case "$sel" in
            "") args=(test_smtlibv2.py) ;;
            *" "*) args=(-k "$sel" test_smtlibv2.py) ;;
            *) args=("test_smtlibv2.py::$sel") ;;
        esac
        ( cd "$work" && PATH="$tmp/$name/bin:$PATH" PYTHONDONTWRITEBYTECODE=1 timeout 1800 \
            "$venv/bin/python" -m pytest -p no:cacheprovider -q -rA --timeout 300 \
            --junitxml "$tmp/$name.$i.xml" "${args[@]}" >"$tmp/$name.$i.log" 2>&1 ) || true
    done
    echo "$name: $((SECONDS - start)) s"
}

runs=(z3 z3-hybrid z3-stack)
run z3 z3 "$real_z3" - "$z3_filter" &
run z3-hybrid z3 "$real_z3" hybrid "$z3_filter" &
run z3-stack z3 "$real_z3" stack "$z3_filter" &
wait # then the yices runs: 6 runs at once on 2 cores slow the latency-bound Manticore down too much
runs+=(z3-portfolio)
run z3-portfolio z3 "$real_z3,$real_yices" hybrid "$z3_filter" &
if [ ${#yices_classes[@]} -gt 0 ]; then
    runs+=(yices yices-hybrid yices-stack)
    run yices yices-smt2 "$real_yices" - "${yices_classes[@]}" &
    run yices-hybrid yices-smt2 "$real_yices" hybrid "${yices_classes[@]}" &
    run yices-stack yices-smt2 "$real_yices" stack "${yices_classes[@]}" &
fi
wait

echo "z3: $real_z3 ($("$real_z3" --version | head -n 1)); yices-smt2: $real_yices ($("$real_yices" --version | head -n 1))"
echo "smtproxy: $bin; yices runs: $(printf '[%s] ' "${yices_classes[@]}")"
set +e
"$venv/bin/python" - "$tmp" "${runs[@]}" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
out, runs = sys.argv[1], sys.argv[2:]
MIN_PASSED = 50

def results(name):
    r, files = {}, sorted(glob.glob(f"{out}/{name}.*.xml"))
    for log in sorted(glob.glob(f"{out}/{name}.*.log")):
        if log[:-4] + ".xml" not in files:
            print(f"{name}: no junit xml; log tail of {log}:\n{open(log).read()[-2000:]}")
            return None
    for f in files:
        for tc in ET.parse(f).getroot().iter("testcase"):
            tid = f"{tc.get('classname').rsplit('.', 1)[-1]}::{tc.get('name')}"
            bad = [c for c in tc if c.tag in ("failure", "error")]
            if any(c.tag == "skipped" for c in tc):
                r[tid] = ("skip", "")
            elif bad:
                msg = (bad[0].get("message") or bad[0].text or "").strip().replace("\n", " ")
                r[tid] = ("fail", msg[:160])
            else:
                r[tid] = ("pass", "")
    return r

res = {n: results(n) for n in runs}
ok = True
print(f"{'run':14} {'solver':9} {'passed':>6} {'failed':>6} {'skipped':>7}")
for n in runs:
    r = res[n]
    if r is None:
        print(f"{n:14} {'-':9} {'-':>6} {'-':>6} {'-':>7}")
        ok = False
        continue
    c = {k: sum(1 for v, _ in r.values() if v == k) for k in ("pass", "fail", "skip")}
    print(f"{n:14} {'smtproxy' if '-' in n else 'real':9} {c['pass']:6} {c['fail']:6} {c['skip']:7}")
for n in runs:
    ref_name = n.split("-")[0]
    ref, r = res[ref_name], res[n]
    if ref is None or r is None:
        continue
    if n == ref_name:
        passed = sum(1 for v, _ in ref.values() if v == "pass")
        if passed < MIN_PASSED:
            print(f"  {n}: only {passed} tests pass with the real solver (at least {MIN_PASSED} expected)")
            ok = False
        continue
    for t in sorted(set(ref) | set(r)):
        a, b = ref.get(t, ("missing", "")), r.get(t, ("missing", ""))
        if (a[0] == "pass") != (b[0] == "pass"):
            ok = False
            why = b[1] or a[1]
            print(f"  DIFFERS {n}: {t}: {ref_name} {a[0]}, smtproxy {b[0]}" + (f": {why}" if why else ""))
print("test-manticore: OK" if ok else "test-manticore: FAILED")
sys.exit(0 if ok else 1)
PY
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    keep=1
    echo "test-manticore: logs kept in $tmp"
fi
exit "$rc"

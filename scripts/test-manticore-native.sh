#!/usr/bin/env bash
# Manticore 0.3.7 exploring a real binary, with the real z3 and with smtproxy as `z3`:
# scripts/manticore/branches.c (reads 8 bytes from stdin and branches on them: a magic prefix
# checked in a loop, an XOR, a sum over 4 bytes, a remainder, a chain of comparisons; 10 paths) is
# built with gcc -static -O0 (freestanding: Manticore 0.3.7 does not know the rseq system call that
# glibc's static start-up makes) and explored by the `manticore` CLI twice, with stdin symbolic
# (--native.stdin_size 8), one worker (--core.mprocessing single, --core.procs 1), a fixed seed and
# --smt.solver z3 (the default, auto, would pick yices-smt2 when it is on PATH), in a workspace per
# run:
#   z3         `z3` first on PATH = the real z3 (a symlink)
#   smtproxy   `z3` = smtproxy --solver REAL_Z3 --strategy hybrid --cache TMP_STORE --stats ARGS...,
#              behind a wrapper that records what Manticore sends (and what smtproxy answers, and
#              its stderr with SMTPROXY_VERBOSE=1) in the run's directory; $SMTPROXY_STRATEGY picks
#              another strategy
# Manticore writes each test case's stdin (test_*.stdin); the compiled program is run on each and
# its output and exit status make the test case's behaviour. The models may differ between the
# solvers, so the comparison is of what is stable: the number of test cases, the set of behaviours
# the test_*.stdin files reach, and the set of paths Manticore reports (its emulated stdout per test
# case, test_*.stdout). Prints a table (run, test cases, behaviours, paths, test cases whose stdin
# does not reproduce the path Manticore reported, seconds). Exits non-zero when the runs differ, or
# when the real z3 finds fewer than 3 test cases (a broken setup cannot pass vacuously); then also
# checks the recorded smtproxy session against the real z3 (scripts/manticore/check-session.py:
# check-sat answers, every get-value answer a model of its query, the one-byte queries Manticore
# writes test_*.stdin with taken together, first differing exchange) and keeps the logs (path
# printed). About 20 seconds (30 when it fails).
# Installs the Manticore venv with its [native] extras (scripts/install-deps.sh) when missing. Needs gcc (x86-64;
# no libc is linked) and target/release/smtproxy (or $SMTPROXY_BIN); builds it if missing.
set -euo pipefail
# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup
smtproxy_manticore_env

bin=$(smtproxy_bin)
strategy=${SMTPROXY_STRATEGY:-hybrid}

venv=$(smtproxy_manticore_venv)
if ! "$venv/bin/python" -c 'import manticore.native, capstone, unicorn, elftools' >/dev/null 2>&1; then
    bash scripts/install-deps.sh
fi

real_z3=$(smtproxy_real_solver z3 "$bin" test-manticore-native)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-manticore-native.XXXXXX")
keep=0
trap '[ "$keep" -eq 1 ] || rm -rf "$tmp"' EXIT

prog=$tmp/branches
gcc -static -O0 -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie \
    -fcf-protection=none -o "$prog" scripts/manticore/branches.c

# run NAME: Manticore on $prog with $tmp/NAME/bin first on PATH; workspace $tmp/NAME/ws, log
# $tmp/NAME/manticore.log, wall time in $tmp/NAME/seconds.
run() {
    local dir=$tmp/$1 rc=0
    (
        cd "$dir"
        PATH="$dir/bin:$PATH" PYTHONDONTWRITEBYTECODE=1 timeout 90 "$venv/bin/manticore" \
            --no-colors --workspace "$dir/ws" --smt.solver z3 --core.mprocessing single \
            --core.procs 1 --core.seed 1 --native.stdin_size 8 "$prog" \
            </dev/null >"$dir/manticore.log" 2>&1
    ) || rc=$?
    echo "$rc" >"$dir/rc"
}

mkdir -p "$tmp/z3/bin" "$tmp/smtproxy/bin" "$tmp/smtproxy/rec"
ln -s "$real_z3" "$tmp/z3/bin/z3"
# smtproxy as z3; records each solver process's arguments, input, output and stderr as
# rec/PID.{args,in,out,err}. `--version` goes straight through (nothing to record).
{
    echo '#!/usr/bin/env bash'
    printf 'bin=%q real=%q strategy=%q store=%q rec=%q/$$\n' \
        "$bin" "$real_z3" "$strategy" "$tmp/smtproxy/store" "$tmp/smtproxy/rec"
    cat <<'EOF'
case " $* " in
    *" --version "*) exec "$bin" --solver "$real" --strategy "$strategy" --cache "$store" "$@" ;;
esac
printf '%q ' "$@" >"$rec.args"
tee "$rec.in" | SMTPROXY_VERBOSE=1 "$bin" --solver "$real" --strategy "$strategy" \
    --cache "$store" --stats "$@" 2>"$rec.err" | tee "$rec.out"
EOF
} >"$tmp/smtproxy/bin/z3"
chmod +x "$tmp/smtproxy/bin/z3"

runs=(z3 smtproxy)
for name in "${runs[@]}"; do
    start=$(date +%s.%N)
    run "$name"
    end=$(date +%s.%N)
    echo "$start $end" | awk '{printf "%.1f\n", $2 - $1}' >"$tmp/$name/seconds"
done

echo "z3: $real_z3 ($("$real_z3" --version | head -n 1)); smtproxy: $bin --strategy $strategy"
echo "manticore $("$venv/bin/python" -c 'import pkg_resources as p; print(p.get_distribution("manticore").version)'), target: scripts/manticore/branches.c"
set +e
"$venv/bin/python" - "$tmp" "$prog" "${runs[@]}" <<'PY'
import ast, glob, os, subprocess, sys
tmp, prog, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
MIN_TESTS = 3

def behaviour(data):
    p = subprocess.run([prog], input=data, capture_output=True, timeout=10)
    return f"{p.stdout.decode(errors='replace').strip() or '-'}/{p.returncode}"

def collect(name):
    ws = f"{tmp}/{name}/ws"
    rc = open(f"{tmp}/{name}/rc").read().strip()
    cases = []
    for f in sorted(glob.glob(f"{ws}/test_*.stdin")):
        base = f[: -len(".stdin")]
        stdin = open(f, "rb").read()
        claimed = open(base + ".stdout", "rb").read().decode(errors="replace").strip() or "-"
        model = None  # the one get-value of all STDIN bytes Manticore makes for test_*.input
        try:
            for line in open(base + ".input"):
                if line.startswith("STDIN: "):
                    model = ast.literal_eval(line[len("STDIN: "):].strip())
        except (OSError, ValueError, SyntaxError):
            pass
        cases.append({"id": os.path.basename(base), "stdin": stdin, "got": behaviour(stdin),
                      "claimed": claimed, "model": model,
                      "model_got": behaviour(model) if model is not None else None})
    return {"rc": rc, "cases": cases, "secs": open(f"{tmp}/{name}/seconds").read().strip()}

res = {n: collect(n) for n in runs}
ok = True
print(f"{'run':9} {'tests':>5} {'behaviours':>10} {'paths':>5} {'not-reproduced':>14} {'seconds':>7}")
for n in runs:
    r = res[n]
    cs = r["cases"]
    bad = sum(1 for c in cs if c["got"].split("/")[0] != c["claimed"])
    print(f"{n:9} {len(cs):5} {len({c['got'] for c in cs}):10} {len({c['claimed'] for c in cs}):5} "
          f"{bad:14} {r['secs']:>7}")
ref = res[runs[0]]
if ref["rc"] != "0" or len(ref["cases"]) < MIN_TESTS:
    print(f"  {runs[0]}: manticore exit status {ref['rc']}, {len(ref['cases'])} test cases "
          f"(at least {MIN_TESTS} expected); log: {tmp}/{runs[0]}/manticore.log")
    ok = False
for n in runs[1:]:
    r = res[n]
    if r["rc"] != "0":
        print(f"  {n}: manticore exit status {r['rc']}; log: {tmp}/{n}/manticore.log")
        ok = False
    if len(r["cases"]) != len(ref["cases"]):
        print(f"  DIFFERS {n}: {len(r['cases'])} test cases, {runs[0]} {len(ref['cases'])}")
        ok = False
    for what, key in (("behaviours of the test_*.stdin files", "got"),
                      ("paths Manticore reports (test_*.stdout)", "claimed")):
        a, b = {c[key] for c in ref["cases"]}, {c[key] for c in r["cases"]}
        if a != b:
            ok = False
            print(f"  DIFFERS {n}: {what}: only with {runs[0]}: {sorted(a - b)}; "
                  f"only with {n}: {sorted(b - a)}")
for n in runs:
    for c in res[n]["cases"]:
        if c["got"].split("/")[0] != c["claimed"]:
            print(f"  {n} {c['id']}: Manticore reports '{c['claimed']}', its .stdin "
                  f"{c['stdin'].hex()} runs as {c['got']}; the model in its .input "
                  f"{c['model'].hex() if c['model'] is not None else '?'} runs as {c['model_got']}")
if any(c["got"].split("/")[0] != c["claimed"] for n in runs for c in res[n]["cases"]):
    print("  (Manticore 0.3.7 writes test_*.stdin one byte per solver query, each a fresh query "
          "(reset) with the path's assertions;\n   the bytes agree only if the solver answers "
          "each such query with the same model)")
print("test-manticore-native: OK" if ok else "test-manticore-native: FAILED")
sys.exit(0 if ok else 1)
PY
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    keep=1
    for f in "$tmp"/smtproxy/rec/*.in; do
        [ -s "$f" ] || continue
        python3 scripts/manticore/check-session.py "$real_z3" "$f" "${f%.in}.out" "${f%.in}.args" || true
        if [ -s "${f%.in}.err" ]; then
            echo "  smtproxy stderr (${f%.in}.err):"
            head -n 20 "${f%.in}.err" | sed 's/^/    /'
        fi
    done
    echo "test-manticore-native: logs kept in $tmp (z3/, smtproxy/: manticore.log, ws/ workspace; smtproxy/rec/: solver sessions)"
fi
exit "$rc"

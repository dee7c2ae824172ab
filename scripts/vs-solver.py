#!/usr/bin/env python3
"""smtproxy in front of a solver against that solver alone, on the same stream.

    python3 scripts/vs-solver.py [--solvers z3,yices,cvc5] [--limit 60] [--repeat N] [--proxy-args '...'] [LOG...]

For each log (default: smt2-corpus/klee/*/{solver,all}-queries.smt2.gz, smt2-corpus/external/*.smt2.gz
and *.kquery.gz (a KQuery log as the SMT2 log `smtproxy replay --print-log` prints),
the recorded client sessions smt2-corpus/sessions/*.smt2.gz and the shared corpus' domain.smt2 when
present) the stream is the log with every `(exit)` line replaced by `(reset)` (as scripts/z3-direct.sh
feeds z3), written once to a temporary file. For each solver S, one run each, back to back (the same
binary: smtproxy resolves pyenv shims itself):

    direct: S <S's flags> < stream                    (z3 -in, cvc5 --incremental, yices-smt2 --incremental)
    proxy:  smtproxy --solver S <S's flags> < stream  (an empty result store in a temporary directory, made
            by a run on empty input first: creating the SQLite file costs ~60 ms, once per machine)

A recorded client session (first line `;; argv: CMD ...`) runs only with the solver it was recorded
with. Both runs' stdout is kept and the check-sat answers are compared (`diff` column: answers that differ).
A direct run that takes longer than --limit seconds (default 60) is stopped, and the proxy run on that
log is skipped (the row says so); a proxy run is stopped after 4 times that. The solver binary is the real one behind pyenv's shim (a shim costs ~50 ms
per start), the same for both sides. Prints one row per (log, solver): seconds direct, seconds proxy,
ratio proxy/direct (at most 1.00 is the goal), and the CPU seconds of each side (the process and every
solver process it started, those still exiting when it exits included: this script is their subreaper;
less sensitive than wall time to other work on the machine).

`--repeat N` (default 1): where the first direct run took less than --short seconds (default 0.2),
both sides run N times, interleaved (direct, then proxy on a new empty store), and each column is the
median of the N runs (the `n` column says how many). Logs that take longer run once.
"""
import argparse
import glob
import gzip
import os
import resource
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = {"z3": ["-in"], "cvc5": ["--incremental"], "yices": ["--incremental"]}
BINARY = {"z3": "z3", "cvc5": "cvc5", "yices": "yices-smt2"}
EXIT = re.compile(rb"^[ \t]*\(exit\)[ \t]*$", re.M)


def real_binary(name):
    p = shutil.which(name)
    if p is None:
        sys.exit(f"vs-solver.py: {name} not found (bash scripts/install-deps.sh --solvers-only)")
    if "/shims/" in p:
        p = subprocess.run(["pyenv", "which", name], capture_output=True, text=True, check=True).stdout.strip()
    return p


def default_logs():
    logs = sorted(glob.glob(os.path.join(ROOT, "smt2-corpus/klee/*/solver-queries.smt2.gz")))
    logs += sorted(glob.glob(os.path.join(ROOT, "smt2-corpus/klee/*/all-queries.smt2.gz")))
    logs += sorted(glob.glob(os.path.join(ROOT, "smt2-corpus/external/*.smt2.gz")))
    logs += sorted(glob.glob(os.path.join(ROOT, "smt2-corpus/external/*.kquery.gz")))
    logs += sorted(glob.glob(os.path.join(ROOT, "smt2-corpus/sessions/*.smt2.gz")))
    logs += sorted(glob.glob(os.path.join(ROOT, "../shared/corpus/external/smtlib-benchmark-submission-2022/incremental/*/*/*.smt2")))
    return logs


def recorded_for(data):
    """The solver a recorded client session was sent to (its first line, `;; argv: CMD ...`,
    see scripts/record-session.sh), or None: a client's stream is written for its solver
    (z3's options, say), so a session is run only in front of that one."""
    first = data.split(b"\n", 1)[0].decode(errors="replace")
    if not first.startswith(";; argv: "):
        return None
    words = first[len(";; argv: "):].split()
    prog = os.path.basename(words[0]) if words else ""
    return next((s for s, b in BINARY.items() if b == prog), None)


def answers(out):
    return [l for l in out.split(b"\n") if l.strip() in (b"sat", b"unsat", b"unknown")]


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def become_subreaper():
    """Processes orphaned under this one (a solver smtproxy left dying at its exit, reaped by
    no one) are reparented here, so that `reap_orphans` counts their CPU too."""
    try:
        import ctypes
        PR_SET_CHILD_SUBREAPER = 36
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def reap_orphans():
    """Waits for every child left (orphans reparented here), so their CPU is counted."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def run(cmd, stream, limit):
    """(wall seconds, CPU seconds of the process and of every process under it, stdout)"""
    c0 = cpu()
    start = time.monotonic()
    with open(stream, "rb") as f:
        p = subprocess.Popen(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.communicate()
            reap_orphans()
            return None, None, None
    wall = time.monotonic() - start
    # smtproxy ends its solvers without waiting for them: they may still be exiting.
    reap_orphans()
    return wall, cpu() - c0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--solvers", default="z3,yices,cvc5")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds a solver alone may take on a log")
    ap.add_argument("--proxy", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release/smtproxy"))
    ap.add_argument("--proxy-args", default="", help="extra smtproxy options, split on spaces")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side on a short log (medians)")
    ap.add_argument("--short", type=float, default=0.2, help="a log whose direct run is shorter is repeated")
    ap.add_argument("logs", nargs="*")
    a = ap.parse_args()
    become_subreaper()
    logs = a.logs or default_logs()
    solvers = a.solvers.split(",")
    bins = {s: real_binary(BINARY[s]) for s in solvers}
    tmp = tempfile.mkdtemp(prefix="vs-solver-")
    print(f"{'log':34} {'solver':6} {'direct_s':>9} {'proxy_s':>9} {'ratio':>6} {'cpu_d':>7} {'cpu_p':>7} {'diff':>5} {'n':>3}")
    worst = {}
    try:
        for log in logs:
            if ".kquery" in log:
                # KQuery: the SMT2 query log it stands for, as smtproxy's replay reads it.
                data = subprocess.run([a.proxy, "replay", "--print-log", log], capture_output=True, check=True).stdout
            else:
                data = gzip.open(log).read() if log.endswith(".gz") else open(log, "rb").read()
            stream = os.path.join(tmp, "stream.smt2")
            with open(stream, "wb") as f:
                f.write(EXIT.sub(b"(reset)", data))
            name = os.path.basename(os.path.dirname(log)) + "/" + os.path.basename(log).split(".")[0]
            if "/external/" in log and "klee" not in log:
                name = "external/" + os.path.basename(log).split(".")[0]
            recorded = recorded_for(data)
            for s in solvers:
                if recorded not in (None, s):
                    continue
                limit = a.limit
                d, dc, dout = run([bins[s]] + FLAGS[s], stream, limit)
                if d is None:
                    print(f"{name:34} {s:6} {'>' + str(int(limit)):>9} {'skipped':>9}      -     -   ({s} alone over {int(limit)} s)")
                    continue
                store = os.path.join(tmp, f"store-{s}.sqlite3")

                def proxy_run():
                    for f in glob.glob(store + "*"):
                        os.unlink(f)
                    run([a.proxy, "--cache", store, "--solver", s] + FLAGS[s], os.devnull, None)
                    return run([a.proxy, "--solver", s, "--cache", store] + a.proxy_args.split() + FLAGS[s], stream, 4 * limit)

                p, pc, pout = proxy_run()
                if p is None:
                    print(f"{name:34} {s:6} {d:9.3f} {'>' + str(int(4 * limit)):>9}      -     -   (smtproxy stopped)", flush=True)
                    worst[s] = float("inf")
                    continue
                da, pa = answers(dout), answers(pout)
                diff = sum(1 for x, y in zip(da, pa) if x != y) + abs(len(da) - len(pa))
                n = 1
                if a.repeat > 1 and d < a.short:
                    runs = [(d, dc, p, pc)]
                    for _ in range(a.repeat - 1):
                        d2, dc2, _o = run([bins[s]] + FLAGS[s], stream, limit)
                        p2, pc2, pout2 = proxy_run()
                        if d2 is None or p2 is None:
                            continue
                        pa2 = answers(pout2)
                        diff += sum(1 for x, y in zip(da, pa2) if x != y) + abs(len(da) - len(pa2))
                        runs.append((d2, dc2, p2, pc2))
                    n = len(runs)
                    d, dc, p, pc = (statistics.median(r[i] for r in runs) for i in range(4))
                ratio = p / d
                worst[s] = max(worst.get(s, 0.0), ratio)
                print(f"{name:34} {s:6} {d:9.3f} {p:9.3f} {ratio:6.2f} {dc:7.3f} {pc:7.3f} {diff:5d} {n:3d}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for s, r in worst.items():
        print(f"worst ratio {s}: {r:.2f}")


if __name__ == "__main__":
    main()

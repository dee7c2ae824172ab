#!/usr/bin/env python3
"""Check a recorded solver session (what a client sent, what smtproxy answered) against the real
solver. Used by scripts/test-manticore-native.sh when a run through smtproxy differs.

usage: check-session.py REAL_SOLVER IN OUT [ARGS_FILE]

IN is what the client wrote to the solver's stdin, OUT what came back; ARGS_FILE holds the
solver's command line arguments (shell-quoted, as the wrapper wrote them). Prints
  - how many check-sat answers differ from the real solver's on the same input (it is fed the
    whole of IN; Manticore resets before every query, so its answers do not depend on history),
  - how many get-value answers are not a model of the assertions of their query (each checked by
    the real solver: the query's assertions plus `(= term value)` for every pair must be sat),
  - the first exchange where smtproxy's response text differs from the real solver's,
  - for Manticore's way of writing a test case's input one byte per query (a fresh query with the
    path's assertions and `(assert (= BITVEC a_N))`, a_N defined as `(select ARRAY #xINDEX)`, then
    `(get-value (BITVEC))`, for each byte in turn): whether the bytes of each such run of queries,
    put together, are still a model of the path, and the first query where they stop being one
    (every answer may be right on its own while the input Manticore writes takes another path).
Exits 1 when an answer is wrong (a differing check-sat, or a get-value that is no model) or a run of
one-byte queries is no model as a whole, else 0.
"""
import re
import shlex
import subprocess
import sys

ANSWERING = {"check-sat", "check-sat-assuming", "get-value", "get-model", "get-info",
             "get-option", "echo", "get-unsat-core", "get-assertions", "get-assignment"}


def sexprs(text):
    """Top-level S-expressions and atoms of TEXT, as strings."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == ";":
            while i < n and text[i] != "\n":
                i += 1
            continue
        start = i
        if c != "(":
            while i < n and not text[i].isspace() and text[i] not in "();":
                if text[i] in "|\"":
                    j = text.find(text[i], i + 1)
                    i = n - 1 if j < 0 else j
                i += 1
            out.append(text[start:i])
            continue
        depth = 0
        while i < n:
            c = text[i]
            if c in "|\"":
                j = text.find(c, i + 1)
                i = n if j < 0 else j + 1
                continue
            if c == ";":
                while i < n and text[i] != "\n":
                    i += 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
            if depth == 0:
                break
        out.append(text[start:i])
    return out


def head(cmd):
    return cmd[1:].split(None, 1)[0].rstrip(")") if cmd.startswith("(") else cmd


def pairs(answer):
    """((t1 v1) (t2 v2) ...) -> [(t1, v1), ...]"""
    res = []
    for p in sexprs(answer.strip()[1:-1]):
        parts = sexprs(p.strip()[1:-1])
        if len(parts) == 2:
            res.append((parts[0], parts[1]))
    return res


BIND = re.compile(r"\(assert \(= (\S+) (a_\d+)\)\)")
SELECT = re.compile(r"\(assert \(= (a_\d+) \(select (\S+) (#x[0-9a-fA-F]+|#b[01]+)\)\)\)")


def byte_of(block, term):
    """(ARRAY, INDEX) when BLOCK binds TERM to a_N defined as (select ARRAY INDEX), else None."""
    bound = None
    for c in block:
        m = BIND.fullmatch(c.strip())
        if m and m.group(1) == term:
            bound = m.group(2)
    if bound is None:
        return None
    for c in block:
        for m in SELECT.finditer(c):
            if m.group(1) == bound:
                return m.group(2), m.group(3)
    return None


def run_checks(solver, scripts):
    """Run each script (a list of commands ending in check-sat) after (reset) in one solver
    process; the answer of each."""
    text = []
    for i, sc in enumerate(scripts):
        text += ["(reset)"] + sc + [f'(echo "@@{i}")']
    out = subprocess.run([solver, "-smt2", "-in"], input="\n".join(text) + "\n",
                         capture_output=True, text=True).stdout
    verdicts, cur = {}, []
    for line in out.splitlines():
        if line.startswith("@@"):
            verdicts[int(line[2:])] = " ".join(cur)
            cur = []
        else:
            cur.append(line.strip())
    return [verdicts.get(i, "?") for i in range(len(scripts))]


def short(s, n=160):
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


def main():
    solver, fin, fout = sys.argv[1:4]
    args = ["-smt2", "-in"]
    if len(sys.argv) > 4:
        args = shlex.split(open(sys.argv[4]).read())
    sent = open(fin).read()
    cmds = sexprs(sent)
    got = sexprs(open(fout).read())
    ref = sexprs(subprocess.run([solver] + args, input=sent, capture_output=True, text=True).stdout)

    # Walk the commands, pairing each answering command with its response in both streams.
    exchanges = []  # (command index, query number, command, smtproxy response, z3 response, block)
    block, query, r = [], 0, 0
    for k, c in enumerate(cmds):
        h = head(c)
        if h == "reset":
            block, query = [], query + 1
            continue
        if h in ANSWERING:
            exchanges.append((k, query, c, got[r] if r < len(got) else None,
                              ref[r] if r < len(ref) else None, list(block)))
            r += 1
            continue
        if h not in ("exit",):
            block.append(c)

    first_diff = next((e for e in exchanges if e[3] is not None and e[3] != e[4]), None)
    sat_diffs = [e for e in exchanges if head(e[2]).startswith("check-sat")
                 and e[3] is not None and e[3] != e[4]]

    # Every get-value answer must be a model of the query's assertions.
    gv = [e for e in exchanges if head(e[2]) == "get-value" and e[3] and e[3].startswith("((")]
    def asserted(blk):
        return [c for c in blk if head(c) not in ("check-sat", "get-value")]
    verdicts = run_checks(solver, [asserted(blk) + [f"(assert (= {t} {v}))" for t, v in pairs(ans)]
                                   + ["(check-sat)"] for _, _, _, ans, _, blk in gv])
    bad_models = [(e, v) for e, v in zip(gv, verdicts) if v != "sat"]

    # Runs of one-byte queries (Manticore writing a test case's input): each run's answers put
    # together, pinned one more at a time on the first query's assertions.
    runs, cur = [], []
    for e in gv:
        ps = pairs(e[3])
        b = byte_of(e[5], ps[0][0]) if len(ps) == 1 else None
        if b is None or (cur and b in [x[1] for x in cur]):
            if len(cur) > 1:
                runs.append(cur)
            cur = [] if b is None else [(e, b, ps[0][1])]
            continue
        cur.append((e, b, ps[0][1]))
    if len(cur) > 1:
        runs.append(cur)
    joint_scripts, where = [], []
    for ri, run in enumerate(runs):
        base = asserted(run[0][0][5])
        pins = []
        for j, (e, (arr, idx), val) in enumerate(run):
            pins.append(f"(assert (= (select {arr} {idx}) {val}))")
            joint_scripts.append(base + pins + ["(check-sat)"])
            where.append((ri, j))
    joint = run_checks(solver, joint_scripts) if joint_scripts else []
    broken = {}
    for (ri, j), v in zip(where, joint):
        if v != "sat" and ri not in broken:
            broken[ri] = j

    n_sat = sum(1 for e in exchanges if head(e[2]).startswith("check-sat"))
    print(f"  {fin}: {len(cmds)} commands, {query} queries (reset-separated), {n_sat} check-sat, "
          f"{len(gv)} get-value; {len(got)} responses (real solver on the same input: {len(ref)})")
    print(f"  check-sat answers differing from the real solver: {len(sat_diffs)}")
    for k, q, c, a, b, _ in sat_diffs[:3]:
        print(f"    command #{k} (query {q}): smtproxy {a}, real solver {b}")
    print(f"  get-value answers that are not a model of their query: {len(bad_models)} of {len(gv)}")
    for (k, q, c, a, _, blk), v in bad_models[:3]:
        print(f"    command #{k} (query {q}): {short(c)} -> {short(a)} (real solver: {short(v)})")
    print(f"  runs of one-byte get-value queries: {len(runs)}; whose bytes together are no model of "
          f"the path: {len(broken)}")
    for ri, j in sorted(broken.items())[:3]:
        run = runs[ri]
        (k0, q0, *_), (kj, qj, *_) = run[0][0], run[j][0]
        vals = ", ".join(f"{arr}[{int(idx[2:], 16) if idx.startswith('#x') else idx}]={v}"
                         for _, (arr, idx), v in run[: j + 1])
        print(f"    queries {q0}-{run[-1][0][1]}: no model once query {qj} (command #{kj}) answers; "
              f"bytes so far: {vals}")
    if first_diff:
        k, q, c, a, b, _ = first_diff
        print(f"  first differing exchange: command #{k} (query {q}) {short(c)}")
        print(f"    smtproxy:    {short(a)}")
        print(f"    real solver: {short(b)}")
    else:
        print("  no response differs from the real solver's")
    return 1 if sat_diffs or bad_models or broken else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Replay recorded sessions as pySMT drives its solver, through several commands, and compare.

    python3 scripts/drive-sessions.py [--rounds N] [--show-diff] CMD ARGS... [:: CMD ARGS...] -- SESSION.smt2...

Each session (a file scripts/record-session.sh or scripts/record-pysmt.sh wrote: one solver
process's input, print-success on) runs in a new process of each command, as pySMT's SmtLibSolver
runs it: the process is started, 10 ms slept (pySMT's own pause for the start), then every command
is written and its answer read (one s-expression) before the next, up to `(exit)`, after which the
process is sent `(exit)` and terminated. The time of a session is from the start to its last
answer. Rounds alternate the commands (round 1 of each, then round 2, ...). Prints, per command,
the median total over the rounds and that total less the 10 ms pauses; and, unless every session
gets the same answers from every command as from the first, how many differ (`--show-diff`: the
commands whose answers differ, with both answers).
"""
import statistics
import subprocess
import sys
import time

PAUSE = 0.01


def read_answer(out):
    """One answer: a line, or lines until the parentheses balance."""
    buf, depth = b"", 0
    while True:
        line = out.readline()
        if not line:
            return buf
        buf += line
        depth += line.count(b"(") - line.count(b")")
        if depth <= 0 and buf.strip():
            return buf


def run(cmd, lines):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(PAUSE)
    answers = []
    for line in lines:
        if line == "(exit)":
            break
        try:
            p.stdin.write(line.encode() + b"\n")
            p.stdin.flush()
        except BrokenPipeError:
            answers.append(b"")
            continue
        answers.append(read_answer(p.stdout))
    took = time.monotonic() - t0
    try:
        p.stdin.write(b"(exit)\n")
        p.stdin.close()
    except BrokenPipeError:
        pass
    p.stdout.close()
    p.terminate()
    p.wait()
    return took, answers


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    head, rounds, show_diff = argv[:cut], 1, False
    # Options first; the commands follow (their own flags are not read here).
    while head and head[0] in ("--rounds", "--show-diff"):
        if head[0] == "--rounds":
            rounds, head = int(head[1]), head[2:]
        else:
            show_diff, head = True, head[1:]
    rest = head
    cmds, cur = [], []
    for a in rest:
        if a == "::":
            cmds.append(cur)
            cur = []
        else:
            cur.append(a)
    cmds.append(cur)
    if not all(cmds):
        sys.exit(__doc__)
    sessions = []
    for path in argv[cut + 1:]:
        with open(path) as f:
            sessions.append((path, [l.strip() for l in f if l.strip() and not l.startswith(";")]))
    totals = [[] for _ in cmds]
    answers = [None] * len(cmds)
    for _ in range(rounds):
        for i, cmd in enumerate(cmds):
            total, got = 0.0, []
            for _, lines in sessions:
                took, a = run(cmd, lines)
                total += took
                got.append(a)
            totals[i].append(total)
            answers[i] = got
    pauses = PAUSE * len(sessions)
    for i, cmd in enumerate(cmds):
        med = statistics.median(totals[i])
        differ = sum(1 for a, b in zip(answers[i], answers[0]) if a != b)
        print(f"{' '.join(cmd)[:80]:80} {med:8.3f} s ({med - pauses:.3f} s without the pauses)"
              f"  {len(sessions)} sessions, {differ} answered otherwise than the first command")
        if show_diff and i > 0:
            for (path, lines), a, b in zip(sessions, answers[0], answers[i]):
                for line, x, y in zip(lines, a, b):
                    if x != y:
                        print(f"  {path}: {line[:120]}\n    {' '.join(cmds[0])[:30]}: {x[:200]!r}\n"
                              f"    {' '.join(cmd)[:30]}: {y[:200]!r}")


if __name__ == "__main__":
    main()

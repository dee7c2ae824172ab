#!/usr/bin/env python3
"""Drive a solver command through an SMT-LIB script one command at a time, and time each check-sat.

    python3 scripts/check-times.py SCRIPT.smt2 -- CMD ARGS...

Each top-level command of SCRIPT is written to CMD's stdin; after a `(check-sat...)` its answer line is
read before the next command is written, as an interactive client waits for it. Prints one line per
check-sat: its number, the answer, the seconds it took and the seconds since the start; then the total.
For scripts without `(reset)` blocks (time-session.py times those), e.g. smt2-corpus/external/domain.smt2:
where the time of a session goes, query by query, for the solver alone and through smtproxy.
Commands other than check-sat must print nothing (print-success off), as in such scripts.
"""
import subprocess
import sys
import time


def commands(text):
    """The top-level commands of `text` (comments, string literals and quoted symbols respected)."""
    out, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "|\"":
            j = text.find(c, i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                out.append(text[start:i + 1])
        i += 1
    return out


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        cmds = commands(f.read())
    p = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    start, k = time.perf_counter(), 0
    for c in cmds:
        p.stdin.write(c + "\n")
        p.stdin.flush()
        if c.startswith("(check-sat"):
            t0 = time.perf_counter()
            answer = p.stdout.readline().strip()
            k += 1
            now = time.perf_counter()
            print(f"{k} {answer} {now - t0:.3f} {now - start:.1f}", flush=True)
    p.stdin.close()
    p.wait()
    print(f"total {time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()

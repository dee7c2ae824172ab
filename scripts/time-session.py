#!/usr/bin/env python3
"""Drive a solver command through a session as an interactive client does, and time it.

Each query (a block that starts at a `(reset)`) is written, then its answers are read (one
per check-sat, get-value, get-model, ...: every command that prints something with
print-success off) before the next is written, as Manticore and pySMT wait for theirs.
Prints the wall time of every thousand queries and the total, so that a cost that grows
with the session shows as a rising column, with the command's resident memory then (VmRSS)
and its peak so far (VmHWM), read from /proc (Linux), so that memory that grows with the
session shows as a rising column too.

  python3 scripts/time-session.py SESSION.smt2 -- z3 -smt2 -in
  python3 scripts/time-session.py SESSION.smt2 --answers out.txt -- target/release/smtproxy -smt2 -in
"""
import argparse
import os
import re
import subprocess
import sys
import time

ANSWERING = ("(check-sat", "(get-value", "(get-model", "(get-info", "(get-option",
             "(get-unsat-core", "(get-assertions", "(echo", "(get-objectives")


def blocks(path):
    cur = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("(reset)") and cur:
                yield cur
                cur = []
            if s and not s.startswith(";"):
                cur.append(line if line.endswith("\n") else line + "\n")
    if cur:
        yield cur


TOKEN = re.compile(rb'"(?:[^"]|"")*"(?!")|\|[^|]*\||[()]|[^\s()"|]+|["|]')


class Answers:
    """Reads the solver's answers as whole top-level forms (atoms or balanced lists).

    Works on chunks from os.read and a regular expression over tokens, not a Python call
    per character, so that reading the answers costs the client little beside the solver.
    """

    def __init__(self, fd):
        self.fd = fd
        self.buf = b""
        self.pos = 0
        self.depth = 0
        self.start = None

    def read(self, n):
        forms = []
        while len(forms) < n:
            m = TOKEN.search(self.buf, self.pos)
            # A token that touches the end of what has arrived may go on in the next chunk.
            # So may a string or quoted symbol whose closing quote has not arrived.
            if m is None or m.end() == len(self.buf) or m.group(0) in (b'"', b"|"):
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    raise SystemExit("solver closed its output after %d of %d answers"
                                     % (len(forms), n))
                keep = self.pos if self.start is None else self.start
                self.buf = self.buf[keep:] + chunk
                self.pos -= keep
                if self.start is not None:
                    self.start -= keep
                continue
            tok = m.group(0)
            if self.depth == 0 and self.start is None:
                self.start = m.start()
            self.pos = m.end()
            if tok == b"(":
                self.depth += 1
            elif tok == b")":
                self.depth -= 1
            if self.depth <= 0:
                self.depth = 0
                forms.append(self.buf[self.start:self.pos].decode())
                self.start = None
        return forms


def memory_mb(pid):
    """(VmRSS, VmHWM) of process pid in MB, or (None, None) where /proc does not say."""
    rss = hwm = None
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) / 1024
    except OSError:
        pass
    return rss, hwm


def fmt_mb(v):
    return "%7.1f" % v if v is not None else "      ?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("session")
    ap.add_argument("--answers", help="write every answer here, one per line")
    ap.add_argument("--every", type=int, default=1000)
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("give the solver command after --")
    i = argv.index("--")
    a = ap.parse_args(argv[:i])
    cmd = argv[i + 1:]
    if not cmd:
        ap.error("give the solver command after --")
    # The session is read and split before the clock starts: a client builds its queries in
    # memory, and parsing a file of 30 MB here would count against a fast solver only.
    queries = []
    for block in blocks(a.session):
        want = sum(1 for l in block if l.lstrip().startswith(ANSWERING))
        queries.append(("".join(block).encode(), want))
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    reader = Answers(p.stdout.fileno())
    answers = open(a.answers, "w") if a.answers else None
    t0 = time.monotonic()
    last = t0
    n = 0
    rows = []
    peak = None
    for text, want in queries:
        view = memoryview(text)
        while view:
            view = view[p.stdin.write(view):]
        forms = reader.read(want)
        if answers:
            for f in forms:
                answers.write(" ".join(f.split()) + "\n")
        n += 1
        if n % a.every == 0:
            now = time.monotonic()
            rss, hwm = memory_mb(p.pid)
            rows.append((n, now - last))
            peak = hwm if hwm is not None else peak
            print("queries %6d-%6d: %8.2f s  rss %s MB  peak %s MB"
                  % (n - a.every + 1, n, now - last, fmt_mb(rss), fmt_mb(hwm)), flush=True)
            last = now
    rss, hwm = memory_mb(p.pid)
    peak = hwm if hwm is not None else peak
    p.stdin.close()
    p.wait()
    total = time.monotonic() - t0
    print("total: %d queries in %.2f s (%.2f ms/query), peak rss %s MB"
          % (n, total, 1000 * total / max(n, 1), fmt_mb(peak).strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Time commands on the same stdin, alternated, and print each one's median, least and most wall ms.

    python3 scripts/alternate.py N INPUT -- 'label:command args...' ['label:command args...' ...]

Runs round 1 of every command, then round 2, and so on (N rounds), each with INPUT on its stdin and its
output discarded, so that a machine that gets slower or faster during the runs weighs on every command
alike. For the small differences (a few milliseconds) that one run of `vs-solver.py` cannot show.
"""
import shlex
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    rounds, path = int(sys.argv[1]), sys.argv[2]
    cmds = []
    for a in sys.argv[4:]:
        label, sep, cmd = a.partition(":")
        if not sep:
            sys.exit(f"alternate.py: '{a}' is not label:command")
        cmds.append((label, shlex.split(cmd)))
    times = {label: [] for label, _ in cmds}
    for _ in range(rounds):
        for label, cmd in cmds:
            with open(path, "rb") as inp:
                t0 = time.perf_counter()
                subprocess.run(cmd, stdin=inp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[label].append((time.perf_counter() - t0) * 1000)
    for label, _ in cmds:
        v = sorted(times[label])
        print(f"{label:16s} med {statistics.median(v):9.1f}  min {v[0]:9.1f}  max {v[-1]:9.1f}  ms")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Write a synthetic symbolic-executor session in the shape Manticore gives z3.

Every query is self-contained and starts with (reset): the same preamble, an array declaration
(the same name each time), fresh names for the input bytes it reads (`a_N`, N counting up over the whole
session, as Manticore numbers its expressions), the path condition of one explored state
(which grows by a branch condition at each step of a depth-first exploration), one
branch condition asked both ways, and get-value for the bytes after every sat. So
successive queries share most of their assertions under other names, which is what a
cache must see through.

  python3 scripts/gen-session.py [--queries N] [--seed S] > session.smt2

Deterministic for a given seed. Prints nothing else; the answers are not recorded (the
bench cross-checks every strategy against the `fresh` strategy's answers).
"""
import argparse
import random
import sys

PREAMBLE = [
    "(reset)",
    "(set-logic QF_AUFBV)",
    "(set-option :global-decls false)",
    "(set-option :tactic.solve_eqs.context_solve false)",
]

BYTES = 24


def hexb(v):
    return "#x%02x" % (v & 0xFF)


def condition(rng):
    """A branch condition over input bytes, as a template: ('text with {0} {1}', bytes)."""
    i = rng.randrange(BYTES)
    j = rng.randrange(BYTES)
    k = rng.randrange(256)
    forms = [
        ("(= {0} %s)" % hexb(k), [i]),
        ("(bvult {0} %s)" % hexb(k), [i]),
        ("(bvugt {0} %s)" % hexb(k), [i]),
        ("(= (bvand {0} #x0f) %s)" % hexb(k & 0x0F), [i]),
        ("(= {0} {1})", [i, j]),
        ("(bvult (bvadd {0} {1}) %s)" % hexb(k), [i, j]),
        ("(= ((_ extract 0 0) {0}) #b1)", [i]),
    ]
    return rng.choice(forms)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    counter = [0]

    def fresh():
        counter[0] += 1
        return "a_%d" % counter[0]

    # The explored state's path condition: a list of (template, bytes, polarity).
    path = []
    pending = None
    asked = 0
    while asked < args.queries:
        if pending is None:
            pending = condition(rng)
            polarities = [True, False]
        pol = polarities.pop(0)
        arr = "STDIN"
        used = sorted({b for (_, bs, _) in path for b in bs} | set(pending[1]))
        names = {b: fresh() for b in used}
        lines = list(PREAMBLE)
        lines.append("(declare-fun %s () (Array (_ BitVec 32) (_ BitVec 8)))" % arr)
        for b in used:
            lines.append("(declare-fun %s () (_ BitVec 8))" % names[b])
            lines.append("(assert (= %s (select %s #x%08x)))" % (names[b], arr, b))
        for tmpl, bs, p in path + [(pending[0], pending[1], pol)]:
            c = tmpl.format(*[names[b] for b in bs])
            lines.append("(assert %s)" % (c if p else "(not %s)" % c))
        lines.append("(check-sat)")
        lines.append("(get-value (%s))" % " ".join(names[b] for b in used))
        out.write("\n".join(lines) + "\n")
        asked += 1
        if not polarities:
            # Take one side of the branch (depth-first), or backtrack at depth.
            if len(path) >= 12 or rng.random() < 0.08:
                del path[rng.randrange(len(path) + 1):]
            else:
                path.append((pending[0], pending[1], rng.random() < 0.5))
            pending = None


if __name__ == "__main__":
    main()

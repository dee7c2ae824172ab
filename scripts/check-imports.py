#!/usr/bin/env python3
"""The layering rule of src/: no module imports one that imports it back.

A module is a file (`src/a/b.rs` is `a::b`, `src/a/mod.rs` is `a`). Module A imports B when
A's code outside its tests names B by a `crate::` path, by a `super::` path (`use super::*`
imports the parent), or, for a parent, by a child's name (`child::item`). Prints every cycle
(strongly connected set of modules) and exits 1 if there is one.

    python3 scripts/check-imports.py [SRC_DIR]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")


def module_of(rel):
    mod = rel[:-3].replace(os.sep, "::")
    if mod.endswith("::mod"):
        mod = mod[: -len("::mod")]
    return "crate" if mod in ("lib", "main") else mod


code = {}
for dirpath, _, files in os.walk(root):
    for f in files:
        if f.endswith(".rs"):
            path = os.path.join(dirpath, f)
            text = open(path, encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            text = re.sub(r"//[^\n]*", "", text)
            code[module_of(os.path.relpath(path, root))] = text
mods = set(code)


def resolve(path):
    parts = path.split("::")
    for i in range(len(parts), 0, -1):
        m = "::".join(parts[:i])
        if m in mods:
            return m
    return None


def parent(m):
    return m.rsplit("::", 1)[0] if "::" in m else "crate"


edges = {m: set() for m in mods}
for m, text in code.items():
    for hit in re.finditer(r"crate::([A-Za-z0-9_:]+)(::\{([^}]*)\})?", text):
        base = hit.group(1).rstrip(":")
        targets = [base]
        if hit.group(3):
            targets += [base + "::" + t.strip().split(" ")[0] for t in hit.group(3).split(",") if t.strip() and t.strip() != "self"]
        for t in targets:
            r = resolve(t)
            if r and r != m:
                edges[m].add(r)
    # `super::` inside a file names its parent module's items (the file is module m).
    p = parent(m)
    for hit in re.finditer(r"super::(\*|[A-Za-z0-9_]+)", text):
        name = hit.group(1)
        r = p if name == "*" else (resolve(name) if p == "crate" else resolve(p + "::" + name))
        if r is None:
            r = p
        if r != m and r != "crate":
            edges[m].add(r)
    # A parent naming a child module.
    for child in mods:
        if child != m and parent(child) == m:
            name = child.rsplit("::", 1)[-1]
            if re.search(r"(?<![A-Za-z0-9_:])" + name + r"::", text):
                edges[m].add(child)

# Known cycles, each with why it is still there (none now).
ALLOWED = []

index, low, stack, on, cycles = {}, {}, [], set(), []
sys.setrecursionlimit(10000)


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in sorted(edges[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(sorted(comp))


for v in sorted(mods):
    if v not in index:
        visit(v)
allowed = [c for c in cycles if c in ALLOWED]
cycles = [c for c in cycles if c not in ALLOWED]
for c in allowed:
    print("known import cycle: " + " <-> ".join(c))
for c in cycles:
    links = [f"{a} -> {b}" for a in c for b in sorted(edges[a]) if b in c]
    print("import cycle: " + ", ".join(links))
print(f"{len(mods)} modules, {sum(len(e) for e in edges.values())} imports, {len(cycles)} cycles")
sys.exit(1 if cycles else 0)

#!/usr/bin/env python3
"""Measure the tree's structure: circles of calls between ctl/'s files
(from the objects' symbols: file A calls file B), calls and includes
against the order of ctl/'s rooms (HACKING.md), `return -1;` in ctl/, C
files over the line bound and functions over the function bound.

Usage: structure.py [--check] [ROOT]
Prints what it finds; with --check, exits 1 when a bound is passed by
something not in the exceptions below.
"""
import os
import re
import sys

FILE_MAX = 800
FUNC_MAX = 100

# Files and functions allowed past the bounds, each with its reason.
FILE_EXCEPTIONS = {
}
FUNC_EXCEPTIONS = {
}

SRC_DIRS = ["agent", "ctl", "ebpf", "injector", "lib", "runner", "workloads",
            "tests"]


def c_files(root):
    """every .c and .h of ours (headers hold inline functions too)"""
    for d in SRC_DIRS:
        for dp, dn, fn in os.walk(os.path.join(root, d)):
            dn[:] = [x for x in dn if x not in ("build", "vendor")]
            for f in fn:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dp, f), root)


FUNC_START = re.compile(r"^[A-Za-z_][\w \*]*?\b(\w+)\s*\(")


def functions(path):
    """(name, first line, length) of each function defined at column 0
    with its opening brace on a line of its own."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            # the signature is on the lines above, back to one starting
            # at column 0 with a name and an open parenthesis
            j = i - 1
            name = None
            while j >= 0 and j > i - 8:
                m = FUNC_START.match(lines[j])
                if m and not lines[j].startswith(("static const", "const")) \
                        or (m and "(" in lines[j]):
                    name = m.group(1) if m else None
                    break
                j -= 1
            k = i + 1
            while k < len(lines) and lines[k] != "}" and \
                    not lines[k].startswith("};"):
                k += 1
            if name:
                out.append((name, i + 1, k - i + 1))
            i = k + 1
            continue
        i += 1
    return out


INCLUDE = re.compile(r'^#include\s+"(ctl/[^"]+)"', re.M)

# ctl/'s rooms, in HACKING.md's order: a room calls, and includes the
# headers of, only itself and the rooms before it
ROOMS = ["base", "agent", "testbed", "session", "report", "wl", "trace", "exp", "doctor",
         "search", "tui", "cmd", "main"]


def room(path):
    """ctl/exp/exec.c -> exp; ctl/main.c -> main"""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "main"


def call_graph(root):
    """object -> objects whose global symbols it uses, over ctl/'s objects
    in build/obj (those with a source file still in the tree)."""
    import subprocess
    defs, uses = {}, {}
    obj = os.path.join(root, "build", "obj")
    for dp, dn, fn in os.walk(os.path.join(obj, "ctl")):
        for f in fn:
            if not f.endswith(".o"):
                continue
            m = os.path.relpath(os.path.join(dp, f), obj)[:-2]
            if not os.path.exists(os.path.join(root, m + ".c")):
                continue
            out = subprocess.run(["nm", os.path.join(dp, f)], capture_output=True,
                                 text=True, check=True).stdout
            uses[m] = set()
            for line in out.splitlines():
                w = line.split()
                if len(w) == 3 and w[1] in "TDBR":
                    defs[w[2]] = m
                elif len(w) == 2 and w[0] == "U":
                    uses[m].add(w[1])
    return {m: {defs[s] for s in u if s in defs and defs[s] != m}
            for m, u in uses.items()}


def back_arrows(root, graph):
    """calls and includes from a room to one after it"""
    out = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            if ROOMS.index(room(b)) > ROOMS.index(room(a)):
                out.append(f"{a}.c calls {b}.c")
    for dp, dn, fn in os.walk(os.path.join(root, "ctl")):
        for f in sorted(fn):
            if not f.endswith((".c", ".h")):
                continue
            p = os.path.relpath(os.path.join(dp, f), root)
            text = open(os.path.join(root, p), encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                if ROOMS.index(room(inc)) > ROOMS.index(room(p)):
                    out.append(f"{p} includes {inc}")
    return out


def circles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    root = args[0] if args else "."
    bad = 0

    if not os.path.isdir(os.path.join(root, "build", "obj", "ctl")):
        print("structure: build/obj/ctl missing: run make first", file=sys.stderr)
        return 2
    graph = call_graph(root)
    comps = circles(graph)
    print(f"call circles in ctl/ (file calls file): {len(comps)}")
    for c in comps:
        print("  " + " <-> ".join(c))
    bad += len(comps)
    arrows = back_arrows(root, graph)
    print(f"back arrows between ctl/'s rooms: {len(arrows)}")
    for a in arrows:
        print("  " + a)
    bad += len(arrows)

    rets = []
    for dp, dn, fn in os.walk(os.path.join(root, "ctl")):
        for f in fn:
            if f.endswith(".c"):
                p = os.path.join(dp, f)
                for n, line in enumerate(open(p, encoding="utf-8"), 1):
                    if re.search(r"\breturn -1;", line):
                        rets.append(f"{os.path.relpath(p, root)}:{n}")
    print(f"'return -1;' in ctl/: {len(rets)}")
    for r in rets[:20]:
        print("  " + r)
    bad += len(rets)

    big = []
    long_fns = []
    for f in sorted(c_files(root)):
        n = sum(1 for _ in open(os.path.join(root, f), encoding="utf-8",
                                errors="replace"))
        if n > FILE_MAX and f.endswith(".c"):
            big.append((f, n))
        for name, line, length in functions(os.path.join(root, f)):
            if length > FUNC_MAX:
                long_fns.append((f, name, line, length))
    print(f"C files over {FILE_MAX} lines: {len(big)}")
    for f, n in big:
        why = FILE_EXCEPTIONS.get(f)
        print(f"  {f}: {n}" + (f" (allowed: {why})" if why else ""))
        if not why:
            bad += 1
    print(f"functions over {FUNC_MAX} lines: {len(long_fns)}")
    for f, name, line, length in sorted(long_fns, key=lambda x: -x[3]):
        why = FUNC_EXCEPTIONS.get(f"{f}:{name}")
        print(f"  {f}:{line} {name}: {length}" +
              (f" (allowed: {why})" if why else ""))
        if not why:
            bad += 1
    if check and bad:
        print(f"structure: {bad} past the bounds", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The import graph of the ndgrad package, read from the source (nothing is imported).

Every ``import`` and ``from ... import`` of a package module is an edge, wherever it stands:
at module level or inside a function (a function-local import is an import too; it only
postpones the circle). ``from pkg import name`` points at ``pkg.name`` when that is a module,
else at ``pkg`` itself. Imports of the root package (``from .. import stack``: the public
facade, which imports everything) are counted separately and left out of the graph, or put in
with ``--with-root``.

Prints the strongly connected components of more than one module (import circles), the number
of function-local imports of package modules (per file with ``-v``, which also lists the edges
inside each circle), and the largest file. ``import_graph`` and ``circles`` are what
tests/test_architecture.py checks.

    python tools/import_graph.py [-v] [--with-root] [--files a.py b.py ...] [--tree DIR]

``--files`` limits the function-local count shown per file to those paths (the totals stay
package-wide); ``--tree`` reads the ``ndgrad`` package of another checkout (e.g. an exported
older commit, for before/after figures).
"""

import argparse
import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ndgrad")
PKG = "ndgrad"


def modules(root=ROOT):
    """``{module name: path}`` of every module of the package under `root`."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, os.path.dirname(root))[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join(rel)] = path
    return out


def _resolve(mod, is_pkg, node):
    """The absolute module a ``from`` import names (before its imported names)."""
    if node.level == 0:
        return node.module or ""
    parts = mod.split(".")
    if not is_pkg:
        parts = parts[:-1]
    if node.level > 1:
        parts = parts[:len(parts) - (node.level - 1)]
    base = ".".join(parts)
    return base + "." + node.module if node.module else base


def imports(mod, path, mods):
    """``[(target module, local?)]`` for the package imports of one module."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_pkg = path.endswith("__init__.py")
    found = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name == PKG or a.name.startswith(PKG + "."):
                        name = a.name
                        while name not in mods and "." in name:
                            name = name.rsplit(".", 1)[0]
                        found.append((name, inner))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(mod, is_pkg, child)
                if base != PKG and not base.startswith(PKG + "."):
                    continue
                for a in child.names:
                    sub = base + "." + a.name
                    found.append((sub if sub in mods else base, inner))
            visit(child, inner)

    visit(tree, False)
    return found


def strongly_connected(graph):
    """Tarjan's algorithm, iterative; components as sorted lists."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def import_graph(root=ROOT, with_root=False):
    """``(graph, local_count, root_imports)``: ``{module: set of modules it imports}``,
    ``{module: number of its function-local imports of package modules}`` and the number of
    imports of the root package (left out of the graph unless `with_root`)."""
    mods = modules(root)
    graph = {m: set() for m in mods}
    local_count = {}
    root_imports = 0
    for m, path in mods.items():
        n_local = 0
        for target, local in imports(m, path, mods):
            if target not in mods or target == m:
                continue
            if local:
                n_local += 1
            if target == PKG and m != PKG:
                root_imports += 1
                if not with_root:
                    continue
            graph[m].add(target)
        local_count[m] = n_local
    return graph, local_count, root_imports


def circles(graph):
    """The import circles of `graph`: its strongly connected components of more than one
    module, largest first."""
    comps = [c for c in strongly_connected(graph) if len(c) > 1]
    comps.sort(key=len, reverse=True)
    return comps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", action="store_true",
                    help="function-local imports per file, and the edges inside each circle")
    ap.add_argument("--with-root", action="store_true",
                    help="keep edges to the root package (ndgrad/__init__.py)")
    ap.add_argument("--files", nargs="*", help="show the local-import count of these files")
    ap.add_argument("--tree", help="a checkout whose ndgrad package to read (default: this one)")
    args = ap.parse_args(argv)
    root = os.path.join(os.path.abspath(args.tree), PKG) if args.tree else ROOT
    mods = modules(root)
    graph, local_count, root_imports = import_graph(root, args.with_root)
    comps = circles(graph)
    print(f"modules: {len(mods)}")
    print(f"import circles (strongly connected components of >1 module): {len(comps)}")
    for c in comps:
        print(f"  {len(c)} modules: {', '.join(c)}")
        if args.v:
            inside = set(c)
            for m in c:
                print(f"    {m} -> {', '.join(sorted(graph[m] & inside))}")
    total = sum(local_count.values())
    print(f"function-local imports of package modules: {total}")
    print(f"imports of the root package (ndgrad/__init__): {root_imports}"
          f"{' (in the graph)' if args.with_root else ' (not in the graph)'}")
    if args.v or args.files:
        wanted = None
        if args.files:
            base = os.path.dirname(root)
            wanted = {os.path.join(base, f) for f in args.files}
        rows = [(n, m) for m, n in local_count.items()
                if n and (wanted is None or os.path.abspath(mods[m]) in wanted)]
        for n, m in sorted(rows, reverse=True):
            print(f"  {n:4d}  {m}")
        if wanted is not None:
            print(f"  total in these files: {sum(n for n, _m in rows)}")
    sizes = sorted(((sum(1 for _ in open(p, encoding="utf-8")), m) for m, p in mods.items()),
                   reverse=True)
    print(f"largest file: {sizes[0][1]} ({sizes[0][0]} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The import contract: layers import downward only, no module cycles inside a layer, and no
import placed inside a function to hide either.

Layers, low to high: config (and the other leaf modules) < tracer < primitives < transforms < lax
< numpy < nn, random, scipy < the public top-level modules (pullback/__init__.py, tree_util,
ad_checkpoint, test_util, ...). backends/ (the lowering interpreter) stands beside transforms: it
depends only on primitives, tracer and config, installs itself through hooks, and only the public
top level imports it. The walk is over the source (AST), so imports inside functions, relative and
absolute, count as much as those at the top of a module.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pullback"
ROOT = "pullback"

RANK = {"config": 0, "tracer": 1, "primitives": 2, "transforms": 3, "lax": 4, "numpy": 5,
        "nn": 6, "random": 6, "scipy": 6, "image": 6, "public": 7}
# backends stands beside transforms: it may import these layers, and only "public" imports it
BACKENDS_MAY_IMPORT = {"config", "tracer", "primitives", "backends"}
# top-level modules that import nothing of pullback: the bottom layer
LEAVES = {"config"}

# Function-level imports of pullback modules that are allowed, as {(file, target): reason}.
# Keep it empty: a function-level import hides a cycle or an upward dependency.
ALLOWED_FUNCTION_IMPORTS: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "public"  # pullback/__init__.py
    if parts[1] in RANK or parts[1] == "backends":
        return parts[1]
    if len(parts) == 2 and parts[1] in LEAVES:
        return "config"
    return "public"


def may_import(src_layer: str, dst_layer: str) -> bool:
    if src_layer == "backends":
        return dst_layer in BACKENDS_MAY_IMPORT
    if dst_layer == "backends":
        return src_layer in ("backends", "public")
    return RANK[dst_layer] <= RANK[src_layer]


def discover(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """{module name: (file, is_package)} for every module of the package."""
    mods = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        mods[".".join(parts)] = (path, is_pkg)
    return mods


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """(node, in_function) for every import that runs (typing.TYPE_CHECKING blocks never do)."""
    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    yield from walk_one(sub, in_function)
                continue
            yield from walk_one(child, in_function)

    def walk_one(child, in_function):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
        yield from walk(child, inner)

    yield from walk(tree, False)


def imports_of(module: str, is_pkg: bool, source: str, known: set[str]):
    """(target module, line, in_function) for every pullback module that `module` imports,
    including the packages an import initialises on the way (other than its own ancestors)."""
    out = []
    package = module if is_pkg else module.rpartition(".")[0]
    ancestors = {module.rsplit(".", i)[0] for i in range(module.count(".") + 1)}

    def add(target, node, in_function):
        # importing a.b.c runs a.b's __init__ first (unless the importer is inside a.b already)
        parts = target.split(".")
        for i in range(2, len(parts)):
            pkg = ".".join(parts[:i])
            if pkg in known and pkg not in ancestors:
                out.append((pkg, node.lineno, in_function))
        out.append((target, node.lineno, in_function))

    for node, in_function in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == ROOT or alias.name.startswith(ROOT + "."):
                    parts = alias.name.split(".")
                    while ".".join(parts) not in known and len(parts) > 1:
                        parts.pop()
                    add(".".join(parts), node, in_function)
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - (node.level - 1)]
            base = ".".join(base + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        if not (base == ROOT or base.startswith(ROOT + ".")):
            continue
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            add(sub if sub in known else base, node, in_function)
    return out


def import_graph(src: Path = SRC):
    """[(importer, target, file:line, in_function)] over the whole package."""
    mods = discover(src)
    known = set(mods)
    edges = []
    for mod, (path, is_pkg) in mods.items():
        for target, line, in_function in imports_of(mod, is_pkg, path.read_text(), known):
            if target != mod:
                where = f"{path.relative_to(src.parent)}:{line}"
                edges.append((mod, target, where, in_function))
    return edges


def upward_imports(edges):
    return sorted({f"{where}: {src} ({layer_of(src)}) imports {dst} ({layer_of(dst)})"
                   for src, dst, where, _ in edges if not may_import(layer_of(src), layer_of(dst))})


def cycles(edges, members) -> list[str]:
    """One printed cycle for each strongly connected group of modules among `members`."""
    graph: dict[str, dict[str, str]] = {}
    for src, dst, where, _ in edges:
        if src in members and dst in members:
            graph.setdefault(src, {}).setdefault(dst, where)
    index, low, stack, on, groups = {}, {}, [], set(), []

    def connect(v):  # Tarjan's algorithm, recursive: the module graph is small
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    found = []
    for group in groups:
        start = min(group)
        # shortest way back to `start` inside the group (breadth first)
        prev, frontier = {start: None}, [start]
        while frontier and start not in [w for v in frontier for w in graph.get(v, {})]:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, {})):
                    if w in group and w not in prev:
                        prev[w] = v
                        nxt.append(w)
            frontier = nxt
        last = next(v for v in frontier if start in graph.get(v, {}))
        path = [last]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        path.reverse()
        path.append(start)
        steps = [f"{a} -> {b} ({graph[a][b]})" for a, b in zip(path, path[1:])]
        found.append(f"cycle among {len(group)} modules ({', '.join(sorted(group))}):\n    "
                     + "\n    ".join(steps))
    return found


def function_level_imports(edges):
    return sorted({f"{where}: {src} imports {dst} inside a function"
                   for src, dst, where, in_function in edges
                   if in_function and (where.split(":")[0], dst) not in ALLOWED_FUNCTION_IMPORTS})


EDGES = import_graph()
MODULES = set(discover())


def test_the_walk_sees_the_package():
    layers = {layer_of(m) for m in MODULES}
    assert {"tracer", "primitives", "transforms", "backends", "lax", "numpy", "nn",
            "random", "public", "config"} <= layers
    assert len(EDGES) > 300  # every module imports something


def test_no_layer_imports_a_higher_one():
    bad = upward_imports(EDGES)
    assert not bad, f"{len(bad)} upward imports:\n" + "\n".join(bad)


def test_leaf_modules_import_nothing_of_pullback():
    bad = [f"{where}: {src} imports {dst}" for src, dst, where, _ in EDGES
           if layer_of(src) == "config"]
    assert not bad, "\n".join(bad)


def test_no_cycles_inside_a_layer():
    found = []
    for layer in sorted(set(RANK) | {"backends"}):
        found += cycles(EDGES, {m for m in MODULES if layer_of(m) == layer})
    assert not found, f"{len(found)} import cycles:\n" + "\n".join(found)


def test_no_cycles_inside_the_compiler():
    compiler = {m for m in MODULES if m.startswith("pullback.backends.cpu.compiler.")}
    assert len(compiler) > 5
    found = cycles(EDGES, compiler)
    assert not found, "\n".join(found)


def test_no_imports_inside_functions():
    bad = function_level_imports(EDGES)
    assert not bad, f"{len(bad)} function-level imports of pullback modules:\n" + "\n".join(bad)


def test_every_allowed_function_import_has_a_reason_and_exists():
    present = {(where.split(":")[0], dst) for _, dst, where, f in EDGES if f}
    for key, reason in ALLOWED_FUNCTION_IMPORTS.items():
        assert len(reason) > 20, f"{key}: say why"
        assert key in present, f"{key} is allowed but no longer exists: drop it"


# -- the checker itself catches what it must -------------------------------------------------

def _edges_of(files: dict[str, str], tmp_path: Path):
    for rel, text in files.items():
        path = tmp_path / "pullback" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_graph(tmp_path / "pullback")


def test_the_checker_catches_upward_and_hidden_imports(tmp_path):
    edges = _edges_of({
        "__init__.py": "",
        "numpy/__init__.py": "from ._creation import asarray\n",
        "numpy/_creation.py": "def asarray(x): return x\n",
        "transforms/__init__.py": "",
        "transforms/jvp.py": ("import typing\nif typing.TYPE_CHECKING:\n"
                              "    from ..numpy import asarray\n"
                              "def f(x):\n    from ..numpy._creation import asarray\n"
                              "    return asarray(x)\n"),
        "transforms/vmap.py": "import pullback.lax\nfrom pullback.transforms import jvp\n",
        "lax/__init__.py": "from ..transforms import vmap\n",
    }, tmp_path)
    up = upward_imports(edges)
    assert any("transforms/jvp.py:5" in e and "pullback.numpy._creation" in e for e in up), up
    assert any("transforms/jvp.py:5" in e and "imports pullback.numpy " in e for e in up), up
    assert any("transforms/vmap.py:1" in e and "pullback.lax" in e for e in up), up
    assert not any("jvp.py:3" in e for e in up), "TYPE_CHECKING imports never run"
    hidden = function_level_imports(edges)
    assert hidden and all("jvp.py:5" in h for h in hidden), hidden


def test_the_checker_prints_a_cycle(tmp_path):
    edges = _edges_of({
        "__init__.py": "",
        "lax/__init__.py": "from . import _a\n",
        "lax/_a.py": "from . import _b\n",
        "lax/_b.py": "def f():\n    from ._c import g\n",
        "lax/_c.py": "from ._a import x\n",
    }, tmp_path)
    mods = {m for _, m, _, _ in edges} | {m for m, _, _, _ in edges}
    found = cycles(edges, mods)
    assert len(found) == 1 and "pullback.lax._b -> pullback.lax._c (pullback/lax/_b.py:2)" \
        in found[0], found

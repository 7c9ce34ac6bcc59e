"""The package's layers import one way and never in a circle, lazy imports included.

``core <- physics <- optimize <- io <- export <- workflows <- cli`` (``docs/architecture.md``):
every ``import`` statement of every module of ``jaxrotor`` is read from its source
(``ast``: module level and inside functions alike; ``if TYPE_CHECKING:`` blocks, which
never run, excepted), each resolved to the ``jaxrotor`` modules it executes (the module
named and every package above it that the importer is not already inside). Core is
everything outside the six subpackages (``so3``, ``design``, ``analysis``, the flight
loop, ``metrics``, ...). Then a fresh interpreter loads flight TOMLs and must not have
imported the optimiser or the physics engine.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "jaxrotor"

#: Layers from the bottom; a module may import its own layer and the ones below.
LAYERS = ("core", "physics", "optimize", "io", "export", "workflows", "cli")


def _modules() -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (file, is_package)}`` of every module of ``jaxrotor``."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """Every Import / ImportFrom node, at any depth, outside ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _known(name: str) -> str | None:
    """The longest prefix of ``name`` that is a jaxrotor module."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, is_pkg: bool, node) -> set[str]:
    """The jaxrotor modules an import statement names."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_pkg else module.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        names = [origin] + [f"{origin}.{a.name}" for a in node.names if f"{origin}.{a.name}" in MODULES]
    return {m for m in (_known(n) for n in names if n.split(".")[0] == "jaxrotor") if m is not None}


def _executed(source: str, target: str) -> set[str]:
    """``target`` and the packages above it that importing it runs (those not already above ``source``)."""
    out = set()
    parts = target.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if not (source == name or source.startswith(name + ".")):
            out.add(name)
    return out


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` over every jaxrotor module (lazy imports included)."""
    graph = {}
    for module, (path, is_pkg) in MODULES.items():
        edges = set()
        for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _targets(module, is_pkg, node):
                edges |= _executed(module, target)
        edges.discard(module)
        graph[module] = edges
    return graph


def layer(module: str) -> str:
    """The layer of a module: its subpackage for the six upper layers, else ``core``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS[1:] else "core"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _path(graph, start: str, goal: str, within: set[str]) -> list[str]:
    """A shortest import chain ``start -> ... -> goal`` inside ``within`` (breadth first)."""
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & within):
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    chain, v = [], goal
    while v is not None:
        chain.append(v)
        v = prev.get(v)
    return chain[::-1]


def test_the_graph_reads_lazy_relative_and_parent_package_imports():
    """The reader itself: a function-level import is an edge, a TYPE_CHECKING one is not, ``from . import x``
    names the submodule, and importing ``a.b.c`` from outside ``a.b`` runs the package ``a.b`` too."""
    src = ("from typing import TYPE_CHECKING\nfrom . import metrics\nfrom .design import presets\n"
           "if TYPE_CHECKING:\n    from .optimize import problem\n"
           "def f():\n    from .physics.parts import default_parts\n")
    edges = set()
    for node in _import_nodes(ast.parse(src)):
        for target in _targets("jaxrotor.some_module", False, node):
            edges |= _executed("jaxrotor.some_module", target)
    assert edges == {"jaxrotor.metrics", "jaxrotor.design", "jaxrotor.design.presets", "jaxrotor.physics",
                     "jaxrotor.physics.parts"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("jaxrotor.workflows.sweep") == "workflows" and layer("jaxrotor.design.platform") == "core"


def test_no_import_cycle_among_jaxrotor_modules():
    """No strongly connected component: no module reaches itself through imports, lazy ones included."""
    graph = import_graph()
    found = cycles(graph)
    chains = []
    for comp in found:
        start, within = comp[0], set(comp)
        step = sorted(graph[start] & within)[0]
        chains.append(" -> ".join([start] + _path(graph, step, start, within)))
    assert not found, "import cycles (each a chain back to its start):\n" + "\n".join(chains)


def test_layers_import_one_way():
    """core <- physics <- optimize <- io <- export <- workflows <- cli: no module imports a layer above its own."""
    graph = import_graph()
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = sorted(f"{m} ({layer(m)}) imports {t} ({layer(t)})" for m, targets in graph.items() for t in targets
                 if rank[layer(t)] > rank[layer(m)])
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def _flight_tomls() -> list[Path]:
    """Every shipped configuration that is a plain flight (no optimisation or sweep tables)."""
    import tomllib

    out = []
    for path in sorted((ROOT / "configs").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if "reference" in data and not {"parameters", "objective", "optimize", "sweep", "randomize",
                                        "robust"} & set(data):
            out.append(path)
    return out


def test_loading_a_flight_toml_imports_neither_the_optimiser_nor_the_physics_layer(tmp_path):
    """A fresh interpreter loads every shipped flight TOML and one with [control], [sensors] and [wind]
    (``jaxrotor.io.config.load``) and has imported no ``jaxrotor.optimize`` or ``jaxrotor.physics`` module."""
    paths = _flight_tomls()
    assert len(paths) >= 3, paths
    realistic = tmp_path / "realistic.toml"
    realistic.write_text((ROOT / "configs" / "cs_4r.toml").read_text(encoding="utf-8").replace(
        'kind = "tsit5"\nadaptive = true', 'kind = "heun"\nadaptive = false\ndt = 0.002') +
        "\n[control]\nrate = 500.0\n\n[sensors]\nposition_std = 0.01\ndelay = 1\n\n[wind]\ngust_std = 0.5\n"
        "drag_linear = 0.3\n", encoding="utf-8")
    paths.append(realistic)
    code = ("import json, sys\nimport jaxrotor.io.config as c\n"
            f"names = [c.load(p).name for p in {[str(p) for p in paths]!r}]\n"
            "print(json.dumps({'names': names, 'loaded': sorted(m for m in sys.modules if m.startswith("
            "('jaxrotor.optimize', 'jaxrotor.physics', 'jaxrotor.workflows')))}))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(out["names"]) == len(paths) and "cs_4r" in out["names"]
    assert out["loaded"] == [], f"loading a flight TOML imported {out['loaded']}"


@pytest.mark.parametrize("module", ["jaxrotor.optimize", "jaxrotor.physics", "jaxrotor.io.optimize_config"])
def test_the_layer_test_sees_the_modules_it_guards(module):
    """The guarded modules exist under these names (a rename would make the checks above vacuous)."""
    assert module in MODULES

"""Imports flow one way: app → viz → diagnostics → algorithms → privacy, with no cycles.

Every ``import`` statement of every module (module level or inside a function) is read with
``ast``; a module may import only modules of its own layer or below. ``dpviz`` never imports
Streamlit. Inside the app too (issue 45 item 3): pages (``app/views``) and the app's scripts
(``app/main.py``, ``app/precompute_*.py``) → components → ``dpviz``; no component imports a page
or a script, and no module of ``dpviz`` or ``app`` is in an import cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: (prefix, layer): the longest matching prefix wins.
LAYERS: tuple[tuple[str, int], ...] = (
    ("dpviz._validation", 0), ("dpviz._threads", 0), ("dpviz.privacy", 0),
    ("dpviz.result", 1), ("dpviz.geometry", 1), ("dpviz.data", 1), ("dpviz.registry", 1),
    ("dpviz.specs", 1), ("dpviz.planning", 1), ("dpviz.runner", 1),
    ("dpviz.core", 2), ("dpviz.averaging", 2), ("dpviz.clustering", 2), ("dpviz.mixtures", 2),
    ("dpviz.generative", 2), ("dpviz.large", 2),
    ("dpviz.metrics", 3), ("dpviz.sweeps", 3), ("dpviz.estimators", 3),
    ("dpviz.cli", 3), ("dpviz.__main__", 3), ("dpviz.triage", 3), ("dpviz.serve", 3),
    ("dpviz.ranking", 3), ("dpviz.compare_set", 3),
    ("dpviz.viz", 4),
    ("app.components", 5),
    ("app", 6), ("app.views", 6),
)
NAMES = ("algorithms and privacy", "", "algorithms", "diagnostics", "figures", "app components",
         "app pages and scripts")


def layer(module: str) -> int | None:
    best = None
    for prefix, lay in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), lay)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(path: Path, node: ast.ImportFrom) -> str | None:
    """The absolute module of ``from ...x import y`` written in ``path`` (None if it leaves the tree)."""
    if node.level == 0:
        return node.module
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    if node.level - 1 > len(package) - 1:
        return None
    base = package[:len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports(path: Path) -> list[str]:
    """Every module ``path`` imports: absolute and relative ``import``/``from`` statements, at
    module level or inside functions."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module is None:
                continue
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
            subs = [f"{module}.{a.name}" for a in node.names]
            found = [m for m in subs if _is_module(m)]
            out += found if len(found) == len(subs) else [module, *found]
    return out


#: Imports by discovery (``importlib.import_module``): the module that discovers, and the packages
#: whose every module it imports. The registry (layer 1) imports the family packages (layer 2) so
#: that a new family is one new file: the only upward edges allowed, and only these.
DISCOVERY: dict[str, tuple[str, ...]] = {
    "dpviz.specs": ("dpviz.clustering", "dpviz.mixtures", "dpviz.generative"),
    "dpviz.viz.storyboards": ("dpviz.viz",),
    # a family folder's parts (Explore's live page, form, hand-off, triage, lesson), imported when
    # a page asks for them (app/components/families.py)
    "app.components.families": ("app.components",),
    # the launcher imports every component before the server listens (a script: components are
    # below it; no page is imported, tests/app/test_launch.py)
    "app.launch": ("app.components",),
}


def dynamic_imports(path: Path) -> list[ast.Call]:
    """The ``importlib.import_module(...)`` and ``__import__(...)`` calls of ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("import_module", "__import__"):
                out.append(node)
    return out


def _package_layer() -> int:
    """``import dpviz`` runs ``dpviz/__init__.py``: it costs the highest layer that file imports."""
    return max(layer(t) or 0 for t in imports(ROOT / "dpviz" / "__init__.py") if t != "dpviz")


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def sources() -> list[Path]:
    return sorted(p for d in ("dpviz", "app") for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_upward_import(path):
    me = module_name(path)
    if path.name == "__init__.py" and me == "dpviz":
        return  # the package's public namespace re-exports every layer
    mine = layer(me)
    assert mine is not None, f"{me} has no layer: add it to LAYERS"
    for target in imports(path):
        if me.startswith("dpviz"):
            assert not target.startswith("streamlit"), f"{me} imports Streamlit"
        theirs = _package_layer() if target == "dpviz" else layer(target)
        if theirs is None:
            continue
        assert theirs <= mine, f"{me} (layer {mine}) imports {target} (layer {theirs}): upward"


def test_relative_imports_are_read():
    """``from .plan import X`` in easy_instances/partition.py is seen as dpviz...easy_instances.plan."""
    path = ROOT / "dpviz" / "clustering" / "easy_instances" / "partition.py"
    assert "dpviz.clustering.easy_instances.plan" in imports(path)


def test_import_dpviz_costs_the_layers_its_init_imports():
    assert _package_layer() >= layer("dpviz.metrics")  # dpviz/__init__ imports metrics (diagnostics)


def test_imports_by_discovery_are_only_the_declared_ones():
    """Every ``import_module`` call is in a module of DISCOVERY, and the registry's packages are the
    ones it declares: a module importing by name elsewhere would hide an upward or circular edge."""
    from dpviz.registry import FAMILY_PACKAGES

    found = {module_name(p) for p in sources() if dynamic_imports(p)}
    assert found == set(DISCOVERY), f"imports by discovery outside {sorted(DISCOVERY)}: {sorted(found)}"
    assert tuple(FAMILY_PACKAGES) == DISCOVERY["dpviz.specs"]
    for pkg in DISCOVERY["dpviz.specs"]:
        assert layer(pkg) >= layer("dpviz.specs")
        # discovered family modules may call back into the registry (register), never into what
        # sits above the families (diagnostics, figures, app)
        for path in (ROOT.joinpath(*pkg.split("."))).rglob("*.py"):
            for target in imports(path):
                theirs = layer(target)
                assert theirs is None or theirs <= layer(pkg), f"{module_name(path)} imports {target}"


def import_graph() -> dict[str, set[str]]:
    """module → the modules of ``dpviz`` and ``app`` it imports (``import dpviz`` left out: the
    package namespace re-exports every layer)."""
    mods = {module_name(p): p for p in sources()}
    return {me: {t for t in imports(path) if t in mods and t != me and t != "dpviz"}
            for me, path in mods.items() if me != "dpviz"}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> list[str] | None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return [*stack[stack.index(t):], t] if t in stack else [m, t]
            if t not in state and (cyc := visit(t, [*stack, t])) is not None:
                return cyc
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cyc := visit(m, [m])) is not None:
            return cyc
    return None


def test_no_import_cycles_among_dpviz_and_app_modules():
    cyc = find_cycle(import_graph())
    assert cyc is None, "import cycle: " + " → ".join(cyc or [])


def test_the_cycle_check_catches_the_old_app_circle():
    """A probe: the edge that closed the app's one circle until issue 45 (``components/sweep.py``
    importing ``app.precompute_sweeps`` inside ``sweep_functions``) is found as a cycle, and as an
    upward import (a component importing a script)."""
    graph = import_graph()
    assert "app.components.sweep" in graph["app.precompute_sweeps"]
    graph["app.components.sweep"] = graph["app.components.sweep"] | {"app.precompute_sweeps"}
    cyc = find_cycle(graph)
    assert cyc is not None and {"app.components.sweep", "app.precompute_sweeps"} <= set(cyc)
    assert layer("app.precompute_sweeps") > layer("app.components.sweep")
    assert layer("app.views.explore") > layer("app.components.simulation") > layer("dpviz.viz")


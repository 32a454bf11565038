"""Imports flow one way: app → viz → diagnostics → algorithms → privacy, with no cycles.

Every ``import`` statement of every module (module level or inside a function) is read with
``ast``; a module may import only modules of its own layer or below. ``dpviz`` never imports
Streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: (prefix, layer): the longest matching prefix wins.
LAYERS: tuple[tuple[str, int], ...] = (
    ("dpviz._validation", 0), ("dpviz.privacy", 0),
    ("dpviz.result", 1), ("dpviz.geometry", 1), ("dpviz.data", 1), ("dpviz.registry", 1),
    ("dpviz.core", 2), ("dpviz.averaging", 2), ("dpviz.clustering", 2), ("dpviz.mixtures", 2),
    ("dpviz.generative", 2), ("dpviz.large", 2),
    ("dpviz.metrics", 3), ("dpviz.experiments", 3), ("dpviz.sweeps", 3), ("dpviz.estimators", 3),
    ("dpviz.cli", 3), ("dpviz.__main__", 3), ("dpviz.triage", 3),
    ("dpviz.viz", 4),
    ("app", 5),
)
NAMES = ("algorithms and privacy", "", "algorithms", "diagnostics", "figures", "app")


def layer(module: str) -> int | None:
    best = None
    for prefix, lay in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), lay)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
            subs = [f"{node.module}.{a.name}" for a in node.names]
            found = [m for m in subs if _is_module(m)]
            out += found if len(found) == len(subs) else [node.module, *found]
    return out


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
        theirs = layer(target)
        if theirs is None or target == "dpviz":
            continue
        assert theirs <= mine, f"{me} (layer {mine}) imports {target} (layer {theirs}): upward"


def test_no_import_cycles_among_dpviz_modules():
    graph: dict[str, set[str]] = {}
    mods = {module_name(p): p for p in sources() if module_name(p).startswith("dpviz")}
    for me, path in mods.items():
        if me == "dpviz":
            continue
        graph[me] = {t for t in imports(path) if t in mods and t != me and t != "dpviz"}
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for t in graph.get(m, ()):
            if state.get(t) == 1:
                cyc = [*stack[stack.index(t):], t] if t in stack else [m, t]
                raise AssertionError("import cycle: " + " → ".join(cyc))
            if t not in state:
                visit(t, [*stack, t])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [m])

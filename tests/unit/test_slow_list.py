"""``tests/slow_tests.txt`` (issue 38): every listed test exists, and conftest marks it ``slow``."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _conftest():
    """tests/conftest.py as a module of its own (the suite has several modules named conftest)."""
    spec = importlib.util.spec_from_file_location("dpviz_root_conftest", ROOT / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _defined(path: Path) -> set[str]:
    """``name`` and ``Class::name`` of the test functions a module defines."""
    tree = ast.parse(path.read_text())
    out = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        out |= {f"{cls.name}::{m.name}" for m in cls.body if isinstance(m, ast.FunctionDef)}
    return out


def test_every_listed_test_exists(monkeypatch):
    monkeypatch.setenv("DPVIZ_SLOW_LIST", "1")
    missing = []
    for nid in sorted(_conftest().slow_listed()):
        path, _, rest = nid.partition("::")
        name = rest.split("[", 1)[0]
        if not (ROOT / path).is_file() or name not in _defined(ROOT / path):
            missing.append(nid)
    assert not missing, f"stale entries in tests/slow_tests.txt (run `make slow-list`): {missing}"


class _Item:
    """What the collection hook reads and writes of a pytest item."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid, self.path, self.marks = nodeid, ROOT / nodeid.partition("::")[0], []

    def add_marker(self, mark) -> None:
        self.marks.append(mark.name)


def test_the_collection_hook_marks_listed_tests_slow_and_no_others(monkeypatch):
    monkeypatch.setenv("DPVIZ_SLOW_LIST", "1")
    conftest = _conftest()
    listed = sorted(conftest.slow_listed())
    assert listed, "tests/slow_tests.txt lists no test"
    items = [_Item(listed[0]), _Item("tests/unit/test_slow_list.py::test_every_listed_test_exists")]
    conftest.pytest_collection_modifyitems(type("Config", (), {"rootpath": ROOT})(), items)
    marks = {i.nodeid: i.marks for i in items}
    assert marks[listed[0]] == ["slow"]
    assert marks["tests/unit/test_slow_list.py::test_every_listed_test_exists"] == []

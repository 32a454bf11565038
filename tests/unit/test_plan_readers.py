"""Every surface reads the run's budget plan (issue 26, finding 1): outside the registry, nothing
converts an algorithm's own budget into a row-level guarantee by calling ``spec.guarantee``
directly, and the dead second statement path (``release_statement``) stays deleted."""

from __future__ import annotations

import ast
from pathlib import Path

import dpviz.privacy.release

ROOT = Path(__file__).resolve().parents[2]
#: The one module allowed to call a spec's ``guarantee``: it builds the plans.
PLAN_BUILDER = ROOT / "dpviz" / "planning.py"  # dpviz.registry's calibration and plan (issue 45)


def _direct_guarantee_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "guarantee"]


def test_only_the_registry_calls_spec_guarantee():
    offenders = {}
    for top in ("app", "dpviz"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == PLAN_BUILDER:
                continue
            lines = _direct_guarantee_calls(path)
            if lines:
                offenders[str(path.relative_to(ROOT))] = lines
    assert not offenders, f"read the plan (dpviz.registry.plan / plan_at_budget) instead: {offenders}"
    assert _direct_guarantee_calls(PLAN_BUILDER)  # the check sees the calls where they belong


def test_no_second_release_statement_path():
    assert not hasattr(dpviz.privacy.release, "release_statement")

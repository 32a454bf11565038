"""One budget plan per run (issue 26, finding 1): every surface states the plan's (ε, δ).

For every registered algorithm at a few row-level targets, :func:`dpviz.registry.plan` is within
the target; the library's ``Result.plan``, the release export, the command line and the app's
translation helpers state the same (ε, δ); statement lines of pure-DP algorithms do not inflate ε
(issue 25, finding 5: Easy Instances read 9.64, Balcan 2.02 at ε = 1 in the old export).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

import dpviz
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.release import SecureRNG, export_release
from dpviz.registry import Public, algorithms, plan, plan_at_budget

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ((1.0, 1e-6), (3.0, 1e-8), (0.5, 1e-5))
N, D, K, RADIUS = 2000, 2, 3, 1.0
PUB = Public(N, D, K, RADIUS)
PRIVATE = [s.name for s in algorithms(private_only=True)]

#: Easy Instances' automatic t is its paper's sample complexity (n_min: thousands of tuples), so
#: its plan refuses these small declared sizes from declared values (issue 28). The small-data
#: checks here set t, which the aggregator answers with its own ⊥ when t is below n_min.
EXPLICIT: dict[str, dict] = {"easy_instances": {"n_tuples": 40}, "easy_instances_gmm": {"n_tuples": 40}}


def _cli_params(name: str) -> list[str]:
    return [a for k, v in EXPLICIT.get(name, {}).items() for a in ("--param", f"{k}={v}")]


def _data(n: int = N, seed: int = 11) -> np.ndarray:
    g = np.random.default_rng(seed)
    mu = np.array([[0.5, 0.0], [-0.4, 0.3], [0.0, -0.5]])
    X = mu[g.integers(0, K, n)] + 0.05 * g.normal(size=(n, D))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


def _eps_in(lines: tuple[str, ...]) -> list[float]:
    """Every ε the statement lines quote ("ε = x" and "(x, δ)-DP")."""
    text = " ".join(lines)
    vals = [float(v) for v in re.findall(r"ε = ([0-9.eE+-]+)", text)]
    vals += [float(v) for v in re.findall(r"\(([0-9.eE+-]+), [0-9.eE+-]+\)-DP", text)]
    return vals


@pytest.mark.parametrize("name", PRIVATE)
@pytest.mark.parametrize("target", TARGETS)
def test_plan_is_within_target_and_its_lines_do_not_inflate_eps(name, target):
    eps, delta = target
    p = plan(name, eps, delta, PUB, EXPLICIT.get(name))
    assert p.algorithm == name and p.target == ApproxDP(eps, delta)
    g = p.guarantee
    assert g.eps <= eps * (1 + 1e-9) and g.delta <= delta * (1 + 1e-9)
    quoted = _eps_in(p.lines)
    assert quoted, p.lines
    assert max(quoted) <= eps * (1 + 1e-3), p.lines  # 4 significant digits in the text
    if g.delta == 0.0:  # pure DP: the lines say δ = 0 and convert nothing
        assert "pure DP" in " ".join(p.lines) and p.delta_prime == 0.0
    with_count = plan(name, eps, delta, PUB, EXPLICIT.get(name), count=True)
    assert with_count.guarantee.eps <= eps * (1 + 1e-9) and with_count.size_source == "dp_count"
    assert with_count.count_eps == pytest.approx(0.02 * eps)


def _run(name: str, X: np.ndarray, eps: float, delta: float, **kw):
    spec = dpviz.registry.get(name)
    rng = SecureRNG() if spec.releasable else 5
    kw = EXPLICIT.get(name, {}) | kw
    return dpviz.run(name, X, K, epsilon=eps, delta=delta, radius=RADIUS, rng=rng, n_declared=N, **kw)


@pytest.mark.parametrize("name", PRIVATE)
def test_library_export_and_plan_state_the_same_guarantee(name):
    eps, delta = 2.0, 1e-6
    res = _run(name, _data(), eps, delta)
    want = plan(name, eps, delta, PUB, EXPLICIT.get(name))
    assert res.plan == want  # the same plan, computed before any row was read
    assert res.guarantee == want.guarantee
    if not dpviz.registry.get(name).releasable:
        assert res.simulation
        return
    doc = json.loads(export_release(res, dataset={"name": "blobs", "d": D, "radius": RADIUS}))
    pv = doc["privacy"]
    assert (pv["row_level_eps"], pv["row_level_delta"]) == (want.guarantee.eps, want.guarantee.delta)
    assert pv["delta_prime"] == want.delta_prime and pv["lines"] == list(want.lines)
    assert doc["dataset"]["size_source"] == "declared" and doc["dataset"]["n_declared"] == N
    assert doc["provenance"]["n"]["source"] == "declared"
    with pytest.raises(ValueError, match="not the run's"):  # no second δ′ beside the plan's
        export_release(res, dataset={"name": "blobs"}, delta_prime=want.delta_prime * 2 + 1e-9)


def test_export_of_a_dp_counted_size_says_so():
    res = dpviz.run("dp_lloyd", _data(), K, epsilon=1.0, delta=1e-6, radius=RADIUS, rng=SecureRNG())
    doc = json.loads(export_release(res, dataset={"name": "blobs", "n_declared": 0}))
    assert doc["dataset"]["size_source"] == "dp_count" and "n_declared" not in doc["dataset"]
    assert doc["provenance"]["n"]["source"] == "dp_estimate"
    assert doc["privacy"]["plan"]["count_epsilon"] == pytest.approx(0.02)
    assert doc["privacy"]["row_level_eps"] == pytest.approx(1.0, rel=1e-4)


def test_cli_states_the_plan(tmp_path):
    from dpviz.cli import main

    X = _data()
    csv = tmp_path / "d.csv"
    np.savetxt(csv, X, delimiter=",", header="a,b", comments="")
    for name in ("friendlycore", "balcan", "easy_instances"):
        out = tmp_path / f"{name}.json"
        rc = main(["run", str(csv), "--k", str(K), "--epsilon", "2", "--delta", "1e-6", "--radius", "1",
                   "--n-declared", str(N), "--out", str(out), "--quiet", "--unbooked", "--algorithm", name,
                   *_cli_params(name)])
        assert rc == 0
        doc = json.loads(out.read_text())
        st = doc["statement"]
        assert {v["source"] for v in doc["provenance"].values()} == {"declared"}
        want = plan(name, 2.0, 1e-6, PUB, EXPLICIT.get(name))
        assert (st["epsilon"], st["delta"]) == (want.guarantee.eps, want.guarantee.delta)
        assert st["lines"] == list(want.lines) and st["delta_prime"] == want.delta_prime


def test_app_helpers_state_the_plan():
    """Budget's FriendlyCore ε, Explore's readout and its target-ε reader agree with the plan."""
    from types import SimpleNamespace

    from app.components.friendlycore import run as app_run

    rho, delta = 0.05, 1e-6
    params = {"n_tuples": 40, "r_min": 1e-3, "oracle": "kmeans++"}
    want = plan_at_budget("friendlycore", ZCDP(rho, delta), PUB, params).guarantee
    # Budget's loss-vs-n target is Explore's row-level ε itself (issue 33: no ρ of its own, so no
    # second translation of a ρ into an ε).
    tree = ast.parse((ROOT / "app/views/budget.py").read_text())
    n_specs = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
               and ast.unparse(c.func) == "sweep.SweepSpec" and any(k.arg == "kind" for k in c.keywords)]
    assert [ast.unparse(k.value) for c in n_specs for k in c.keywords if k.arg == "epsilon"] == \
        ["float(p['eps'])"]
    assert "_fc_row_eps" not in (ROOT / "app/views/budget.py").read_text()
    ds = SimpleNamespace(n=N, d=D)
    # Explore's readout: the ledger of a run at (ρ, δ), stated with δ′ = δ.
    res = dpviz.clustering.friendlycore.pipeline.fc_clustering(
        _data(), K, rho=rho, delta=delta, radius=RADIUS, r_min=1e-3, n_tuples=40, rng=3, n_declared=N)
    # (the app displays the library's statement: app.components.simulation.statement_lines)
    row = dpviz.privacy.accounting.explained_statement(res.ledger, delta).row
    assert row.eps == pytest.approx(want.eps, rel=1e-9) and row.delta == pytest.approx(want.delta)
    # Explore's main control, the row-level (ε, δ): its run spends the registry's plan (run.fc_plan),
    # whose own δ equals its δ′; a link's exact ρ is stated by plan_at_budget (δ′ = δ).
    cfg = app_run.RunConfig(k=K, t=40, oracle="kmeans++", seed=0, rho=None, delta=1e-6, radius=RADIUS,
                            r_min=1e-3, preset="practical", fallback=True, eps=1.0)
    cal = app_run.fc_plan(ds, cfg)
    target = plan("friendlycore", 1.0, 1e-6, PUB, params | {"preset": "practical", "fallback": True})
    assert cal == target and cal.budget.delta == cal.delta_prime
    back = plan_at_budget("friendlycore", cal.budget, PUB, params).guarantee
    assert back == target.guarantee
    from dataclasses import replace

    pinned = app_run.fc_plan(ds, replace(cfg, eps=None, rho=rho, delta=delta))
    assert pinned.budget == ZCDP(rho, delta) and pinned.guarantee == want


def test_release_page_exports_without_a_second_delta_prime():
    tree = ast.parse((ROOT / "app/views/release.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", getattr(n.func, "id", None)) == "export_release"]
    assert calls and all("delta_prime" not in {k.arg for k in c.keywords} for c in calls)


def test_compare_axis_and_sweep_budgets_are_the_plan():
    """Compare's rows and the Budget sweep's own budgets are the plan's (no other translation)."""
    from dpviz.sweeps import resolve, sweep

    X = _data(600)
    names = ["dp_lloyd", "balcan", "easy_instances"]
    cmp_ = sweep(X, K, algorithms={n: EXPLICIT.get(n, {}) for n in names}, epsilons=[2.0], delta=1e-6,
                 radius=RADIUS, n_declared=600, reps=1, rng=0)
    pub = Public(600, D, K, RADIUS)
    for name in names:
        row = cmp_.frame[cmp_.frame.algorithm == name].iloc[0]
        want = plan(name, 2.0, 1e-6, pub, EXPLICIT.get(name))
        assert (row.guarantee_eps, row.guarantee_delta) == (want.guarantee.eps, want.guarantee.delta)
    fc_spec, fc_params = resolve("fc:practical", {"n_tuples": 20, "r_min": 1e-3, "oracle": "kmeans++"})
    fc = plan(fc_spec, 2.0, 1e-6, pub, fc_params)
    want = plan("friendlycore", 2.0, 1e-6, pub, {"preset": "practical", "n_tuples": 20, "r_min": 1e-3})
    assert fc == want  # the sweep's "fc:<preset>" name plans exactly as the registry entry

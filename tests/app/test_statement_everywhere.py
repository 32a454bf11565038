"""The cross-surface statement test (issue 26, done-when): at a row-level target (ε, δ), Explore's
readout, Budget's and Compare's axes, the Release page, its export and the command line state the
same (ε, δ): the registry's budget plan of the run (``dpviz.registry.plan``).

Every surface is driven through its page (Streamlit AppTest) on the same public inputs (the
generated SMALL dataset: n = 3000, d = 2, k = 4, Λ = 1); the expected statement is computed
independently from those declared values. A few algorithms (one per budget kind, and FriendlyCore
through its ρ control) run in the fast suite; every registered private algorithm at every target
runs under ``-m slow``. The library/export/CLI level for every algorithm is
``tests/unit/test_budget_plan.py``.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from apptest_helpers import SMALL, click_release, container, finish_job, open_app, row_guarantee, texts

import dpviz
import dpviz.sweeps
from dpviz.registry import Public, algorithms, plan

N, D, K = 3000, 2, 4  # SMALL's generated dataset
ID = "statement check"
#: Easy Instances' automatic t is its paper's n_min (thousands of tuples): its plan refuses a
#: declared n = 3000 at these targets from declared values, and Budget and Release take no t. So
#: these run on the same generator at a size every target can use, declared at its true size.
ROWS = {"easy_instances": 20_000, "easy_instances_gmm": 30_000}


def _n(name: str) -> int:
    return ROWS.get(name, N)


def _small(name: str) -> dict:
    return {**SMALL, "n": str(_n(name))}


def _dataset(at, n: int = N):
    ds = at.session_state["_last_dataset"]
    assert (ds.n, ds.d) == (n, D)
    return ds


def _pub(radius: float, n: int = N) -> Public:
    return Public(n_declared=n, d=D, k=K, radius=float(radius))


def _stated(text: str) -> tuple[str, str]:
    m = re.search(r"\(ε = ([0-9.e+-]+), δ = ([0-9.e+-]+)\)-DP", text)
    assert m, text
    return m.group(1), m.group(2)


def _shown(g) -> tuple[str, str]:
    """How the pages print a guarantee: ε to 3 significant digits, δ to 2."""
    return f"{g.eps:.3g}", f"{g.delta:.2g}"


def _values(arr) -> list:
    """A plotly JSON array: a list, or plotly's typed-array encoding {"dtype", "bdata"}."""
    if arr is None:
        return []
    if isinstance(arr, dict):
        import base64

        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"]).tolist()
    return list(arr)


# ----------------------------------------------------------------------------- the surfaces


def explore(name: str, eps: float, delta: float):
    """Explore at the row-level ε slider: its privacy statement, and the plan it should state."""
    at = open_app(**_small(name), alg=name, eps=str(eps), delta=str(delta))
    at.segmented_control(key="alg_view").set_value("Privacy").run()
    assert not at.exception, [e.value for e in at.exception]
    ds = _dataset(at, _n(name))
    spec = dpviz.registry.get(name)
    want = plan(name, eps, delta, _pub(ds.radius, _n(name)), spec.make_params())
    assert _stated(str(container(at, "privacy_statement").markdown[0].value)) == _shown(want.guarantee)
    own = "\n".join(str(c.value) for c in container(at, "own_budget_readout").caption)
    b = want.budget  # the own budget is the plan's, as a readout (controls.own_budget_readout)
    expected = (f"ρ = {b.rho:.4g} (own δ = {b.delta:.2g}, δ′ = {want.delta_prime:.2g})"
                if hasattr(b, "rho") else str(b))
    assert expected in own, own
    return want, ds


def explore_friendlycore(eps: float, delta: float):
    """FriendlyCore's Explore control is the row-level ε slider like every algorithm's: its ρ is the
    plan's (a readout), and the readout from the run's ledger states that plan's guarantee."""
    at = open_app(**SMALL, eps=str(eps), delta=str(delta))
    assert not at.exception, [e.value for e in at.exception]
    ds = _dataset(at)
    p = at.session_state["params"]
    params = {"n_tuples": p["t"], "r_min": p["rmin"], "oracle": p["oracle"], "preset": p["preset"],
              "fallback": p["fb"]}
    want = plan("friendlycore", eps, delta, _pub(ds.radius), params)
    assert at.select_slider(key="eps_slider").value == eps
    assert at.session_state["_explore_last_result"][1].plan.budget == want.budget  # the plan's ρ
    assert "rho" not in p  # a readout, never a parameter (issue 33)
    shown = row_guarantee(at)
    assert (f"{shown[0]:.3g}", f"{shown[1]:.2g}") == _shown(want.guarantee)
    return want, ds


def compare(name: str, eps: float, delta: float, radius: float):
    """Compare's ε axis: the row's target is ε and its guarantee the plan's, exactly."""
    at = open_app("compare", **_small(name), calg=name, celo=str(eps), cehi=str(eps), cpts="1",
                  cdelta=str(delta), creps="1")
    at.button(key="compare_run").click().run()
    finish_job(at, "compare")  # the comparison runs as a background job (app.components.jobs)
    assert not at.exception, [e.value for e in at.exception]
    spec = at.session_state["_compare_shown"]
    assert (spec.n_declared, spec.d, spec.k, spec.radius) == (_n(name), D, K, radius)
    want = plan(name, eps, delta, _pub(radius, _n(name)), spec.params_of(name))
    summary = at.dataframe[-1].value  # the runs' table (the ranking is first)
    (row,) = summary[summary.algorithm == name].itertuples()
    assert (row.epsilon, row.delta) == (eps, delta)
    assert (row.guarantee_eps, row.guarantee_delta) == (want.guarantee.eps, want.guarantee.delta)
    return want


def budget(name: str, eps: float, delta: float, radius: float, monkeypatch):
    """Budget's row-level ε axis: every point is a target, and its runs spend the plan's budget."""
    used = []
    real = dpviz.sweeps.calibrated  # the sweep engine's ε axis: the registry's plan

    def spy(spec, target_eps, target_delta, pub, params):
        out = real(spec, target_eps, target_delta, pub, params)
        used.append((spec.name, target_eps, target_delta, pub, out))
        return out

    monkeypatch.setattr(dpviz.sweeps, "calibrated", spy)
    at = open_app("budget", **_small(name), balg=name, blo=str(eps), bhi=str(2 * eps), bpts="2", breps="1",
                  delta=str(delta))
    at.button(key="budget_run").click().run()
    finish_job(at, "budget")  # the sweep runs as a background job (app.components.jobs)
    assert not at.exception, [e.value for e in at.exception]
    charts = [c for c in at.get("plotly_chart") if getattr(c, "key", None) == "budget_accuracy"]
    assert charts, texts(at)
    chart = charts[0]
    fig = json.loads(chart.proto.spec)
    xs = sorted({float(x) for tr in fig["data"] for x in _values(tr.get("x"))})
    assert eps in xs and "row-level ε target" in fig["layout"]["xaxis"]["title"]["text"]
    at_target = [u for u in used if u[0] == name and u[1] == eps]
    assert at_target, "the sweep did not calibrate through the registry's plan"
    for _, _, d, public, got in at_target:
        assert d == delta and (public.n_declared, public.d, public.k, public.radius) == (
            _n(name), D, K, radius)
        assert got.guarantee == plan(name, eps, delta, _pub(radius, _n(name))).guarantee
    return at_target[0][4]


def release(name: str, eps: float, delta: float):
    """The Release page's preview and its export state the plan (declared n: the data's size)."""
    at = open_app("release", **_small(name))
    at.text_input(key="release_dataset_id").input(f"{ID} {name} {eps} {delta}")
    at.selectbox(key="release_algorithm").set_value(name)
    at.number_input(key="release_k").set_value(K)
    at.number_input(key="release_eps").set_value(eps)
    at.select_slider(key="release_delta").set_value(delta)
    at.number_input(key="release_n").set_value(_n(name))
    at.run()
    preview = "\n".join(str(m.value) for m in container(at, "release_preview").markdown)
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        at.checkbox(key=key).check()
    at.run()
    click_release(at)
    assert not at.exception, [e.value for e in at.exception]
    assert "Released" in texts(at), texts(at)
    ((res, text, _),) = next(iter(at.session_state["_releases"].values()))
    doc = json.loads(text)
    pv = doc["privacy"]
    return preview, (pv["row_level_eps"], pv["row_level_delta"]), res


def cli(name: str, eps: float, delta: float, ds, tmp_path) -> tuple[float, float]:
    from dpviz.cli import main

    csv = tmp_path / f"small{_n(name)}.csv"
    if not csv.exists():
        np.savetxt(csv, ds.X, delimiter=",", header="x0,x1", comments="")
    out = tmp_path / f"{name}.json"
    rc = main(["run", str(csv), "--k", str(K), "--epsilon", str(eps), "--delta", str(delta), "--radius",
               str(ds.radius), "--n-declared", str(_n(name)), "--out", str(out), "--quiet", "--unbooked",
               "--algorithm", name])
    assert rc == 0
    st = json.loads(out.read_text())["statement"]
    return st["epsilon"], st["delta"]


def check_every_surface(name: str, eps: float, delta: float, tmp_path, monkeypatch) -> None:
    want, ds = explore(name, eps, delta)
    g = want.guarantee
    assert g.eps <= eps * (1 + 1e-9) and g.delta <= delta * (1 + 1e-9)
    assert compare(name, eps, delta, ds.radius).guarantee == g
    assert budget(name, eps, delta, ds.radius, monkeypatch).guarantee == g
    if not dpviz.registry.get(name).releasable:  # its runs come back as simulations: no release
        return
    preview, exported, res = release(name, eps, delta)
    assert f"ε = {g.eps:.3g}, δ = {g.delta:.2g}** per row" in preview, preview
    assert exported == (g.eps, g.delta) and res.plan == want
    assert cli(name, eps, delta, ds, tmp_path) == (g.eps, g.delta)


# ----------------------------------------------------------------------------- fast: a few algorithms

FEW = [("dp_lloyd", 1.0, 1e-6),  # zCDP
       ("balcan", 3.0, 1e-8),  # pure ε-DP
       ("easy_instances", 2.0, 1e-6)]  # its own (ε, δ) accounting


# One kind of accounting in make check (each case is ~20 s of AppTest runs on every page); the
# other two run in make test.
@pytest.mark.parametrize(("name", "eps", "delta"),
                         [FEW[0], *(pytest.param(*case, marks=pytest.mark.slow) for case in FEW[1:])])
def test_every_surface_states_the_plan(name, eps, delta, tmp_path, monkeypatch):
    check_every_surface(name, eps, delta, tmp_path, monkeypatch)


def test_friendlycore_explore_compare_release_and_cli_state_their_plans(tmp_path):
    eps, delta = 3.0, 1e-6
    want, ds = explore_friendlycore(eps, delta)
    # Compare and the Release page use their own public t (n / (10k), the default): each states
    # the plan of its own declared inputs, within the same target.
    cmp_plan = compare("friendlycore", eps, delta, ds.radius)
    preview, exported, res = release("friendlycore", eps, delta)
    rel_plan = plan("friendlycore", eps, delta, _pub(ds.radius))
    assert res.plan == rel_plan and exported == (rel_plan.guarantee.eps, rel_plan.guarantee.delta)
    assert f"ε = {rel_plan.guarantee.eps:.3g}, δ = {rel_plan.guarantee.delta:.2g}** per row" in preview
    assert cli("friendlycore", eps, delta, ds, tmp_path) == exported
    for p in (want, cmp_plan, rel_plan):
        assert p.guarantee.eps <= eps * (1 + 1e-9) and p.guarantee.delta <= delta * (1 + 1e-9)


# ----------------------------------------------------------------------------- FriendlyCore, one path


def _fmt(eps: float, delta: float) -> tuple[str, str]:
    return f"{float(eps):.3g}", f"{float(delta):.2g}"


def budget_fc(eps: float, delta: float, monkeypatch):
    """Budget's FriendlyCore curve at the target: the plan its runs spend (the sweep engine's)."""
    used = []
    real = dpviz.sweeps.calibrated

    def spy(spec, target_eps, target_delta, pub, params):
        out = real(spec, target_eps, target_delta, pub, params)
        used.append((spec.name, target_eps, target_delta, out))
        return out

    monkeypatch.setattr(dpviz.sweeps, "calibrated", spy)
    at = open_app("budget", **SMALL, balg="friendlycore", blo=str(eps), bhi=str(2 * eps), bpts="2", breps="1",
                  delta=str(delta))
    at.button(key="budget_run").click().run()
    finish_job(at, "budget")
    assert not at.exception, [e.value for e in at.exception]
    got = [u[3] for u in used if u[0] == "friendlycore" and u[1] == eps and u[2] == delta]
    assert got, used
    return got[0]


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-6), (3.0, 1e-8)])
def test_friendlycore_states_one_plan_on_every_surface(eps, delta, tmp_path, monkeypatch):
    """Issue 33: FriendlyCore runs through ``dpviz.run`` and every surface states ``Result.plan``:
    Explore (readout, run, download), Data (the triage verdict), Budget, Compare, Present, Release
    (preview and export) and the command line read the same (ε, δ) at the same target."""
    from app.components.friendlycore import page, run

    # Explore: the readout, the run's own plan, and the configuration download
    at = open_app(**SMALL, eps=str(eps), delta=str(delta))
    assert not at.exception, [e.value for e in at.exception]
    ds = _dataset(at)
    want = plan("friendlycore", eps, delta, _pub(ds.radius)).guarantee
    shown = _fmt(want.eps, want.delta)
    assert want.eps <= eps * (1 + 1e-9) and want.delta <= delta * (1 + 1e-9)
    assert _fmt(*row_guarantee(at)) == shown
    result = at.session_state["_explore_last_result"][1]
    assert result.algorithm == "friendlycore" and result.plan.target.eps == eps  # through dpviz.run
    assert _fmt(result.plan.guarantee.eps, result.plan.guarantee.delta) == shown
    cfg = run.RunConfig.from_params(at.session_state["params"], float(ds.radius))
    doc = json.loads(page.config_json(ds, cfg, {}, result=result))
    assert _fmt(doc["plan"]["epsilon"], doc["plan"]["delta"]) == shown
    # Data: the verdict's statement is Explore's plan at the same target
    at.switch_page("views/data.py").run()
    verdict = "\n".join(str(c.value) for c in container(at, "triage_verdict").caption)
    assert f"(row-level ε = {shown[0]}, δ = {shown[1]} per row" in verdict, verdict
    # Present: each side states its run's plan
    at.switch_page("views/present.py").run()
    at.select_slider(key="present_b").set_value(eps).run()
    box = container(at, "present_answer_b")  # its sentence is the chart's caption (issue 43)
    side = "\n".join(str(m.value).replace("\\", "") for m in [*box.markdown, *box.caption])
    assert f"(the run's plan: ε = {shown[0]}, δ = {shown[1]})" in side, side
    # Budget, Compare, Release, the command line
    g = budget_fc(eps, delta, monkeypatch).guarantee
    assert _fmt(g.eps, g.delta) == shown
    g = compare("friendlycore", eps, delta, ds.radius).guarantee
    assert _fmt(g.eps, g.delta) == shown
    preview, exported, res = release("friendlycore", eps, delta)
    assert f"ε = {shown[0]}, δ = {shown[1]}** per row" in preview, preview
    assert _fmt(*exported) == shown and _fmt(res.plan.guarantee.eps, res.plan.guarantee.delta) == shown
    assert _fmt(*cli("friendlycore", eps, delta, ds, tmp_path)) == shown


# ----------------------------------------------------------------------------- slow: every algorithm

TARGETS = ((1.0, 1e-6), (3.0, 1e-8))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "target"), [  # a case FEW already checks runs once (make test ran it twice)
    pytest.param(s.name, target, id=f"{s.name}-target{i}")
    for s in algorithms(private_only=True, applicable_to=D) if s.name != "friendlycore"
    for i, target in enumerate(TARGETS) if (s.name, *target) not in FEW])
def test_every_surface_states_the_plan_for_every_algorithm(name, target, tmp_path, monkeypatch):
    check_every_surface(name, *target, tmp_path, monkeypatch)

"""Explore's shared paths (issue 26): FriendlyCore's URL keys namespaced like every algorithm's (old
flat links still open the same run), a sidebar with the chosen algorithm's parameters only, and one
exploration renderer for FriendlyCore and every other family."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from apptest_helpers import SMALL, container, has_container, open_app

from dpviz.viz import storyboards


def _result(at):
    return at.session_state["_explore_last_result"][1]


def test_old_flat_friendlycore_keys_open_the_same_run_as_the_namespaced_ones():
    flat = {**SMALL, "rho": "0.251", "oracle": "pca", "preset": "paper", "fb": "false", "rmin": "0.002"}
    at = open_app(**flat)
    assert not at.exception
    p = at.session_state["params"]
    assert (p["oracle"], p["preset"], p["fb"], p["rmin"], p["t"]) == ("pca", "paper", False, 0.002, 60)
    assert "rho" not in p and at.session_state["_link_rho"] == 0.251  # the old-link reader only
    q = dict(at.query_params)
    assert {"rho", "friendlycore.rho", "t", "oracle", "preset", "fb", "rmin"}.isdisjoint(q)
    assert (q["friendlycore.n_tuples"], q["friendlycore.oracle"], q["friendlycore.fallback"]) == (
        "60", "pca", "false")
    namespaced = {**SMALL, "friendlycore.rho": "0.251", "friendlycore.oracle": "pca",
                  "friendlycore.preset": "paper", "friendlycore.fallback": "false",
                  "friendlycore.r_min": "0.002"}
    again = open_app(**namespaced)
    assert not again.exception
    a, b = _result(at), _result(again)
    assert (a.centers is None) == (b.centers is None)
    if a.centers is not None:
        np.testing.assert_array_equal(a.centers, b.centers)
    assert a.ledger.total() == b.ledger.total()


def test_a_namespaced_key_wins_over_its_flat_alias():
    at = open_app(**SMALL, rho="0.1", **{"friendlycore.rho": "0.2"})
    assert at.session_state["_link_rho"] == 0.2


def test_sidebar_shows_only_the_chosen_algorithms_parameters():
    fc_keys = ("ex_t", "ex_oracle", "ex_rmin", "ex_preset")
    at = open_app(**SMALL)
    assert not at.exception
    shown = {w.key for w in at.sidebar.number_input} | {w.key for w in at.sidebar.selectbox}
    assert set(fc_keys) <= shown
    other = open_app(**SMALL, alg="dp_lloyd")
    assert not other.exception
    shown = {w.key for w in other.sidebar.number_input} | {w.key for w in other.sidebar.selectbox}
    assert shown.isdisjoint(fc_keys), shown & set(fc_keys)
    assert "algp_dp_lloyd_iters" in shown and {"ex_k", "ex_seed", "ex_radius"} <= shown
    # Apply on another algorithm's form keeps FriendlyCore's knobs as they were
    other.number_input(key="ex_k").set_value(3)
    other.button(key="ex_apply").click().run()
    assert not other.exception
    p = other.session_state["params"]
    assert (p["k"], p["t"], p["oracle"], p["preset"]) == (3, 60, "kmeans++", "practical")


def _titles(at) -> list[str]:
    return [json.loads(e.proto.spec)["layout"].get("title", {}).get("text", "")
            for e in at.get("plotly_chart")]


def test_friendlycore_filters_are_a_registered_exploration_drawn_by_the_shared_renderer():
    assert "Filters & radii" in [v.title for v in storyboards.explorations("friendlycore")]
    at = open_app(**SMALL, rho="10")
    at.segmented_control(key="explore_view").set_value("Filters & radii").run()
    assert not at.exception
    assert has_container(at, "exploration")
    charts = container(at, "exploration").get("plotly_chart")
    assert len(charts) == 3  # match core, dist core, FindDiam


@pytest.fixture
def toy_views():
    """The same exploration registered for two other families: it simulates a second budget."""
    seen = []

    def builder(ctx):
        other = ctx.simulate(epsilon=ctx.epsilon * 2)
        seen.append((ctx.result.algorithm, ctx.epsilon, other.guarantee.eps))
        return go.Figure(layout=dict(title=dict(text=f"toy view of {ctx.result.algorithm}")))

    for name in ("dp_lloyd", "balcan"):
        storyboards.register_exploration(name, "Toy view", builder)
    yield seen
    for name in ("dp_lloyd", "balcan"):
        storyboards._EXPLORATIONS[name] = [v for v in storyboards._EXPLORATIONS.get(name, [])
                                           if v.title != "Toy view"]


@pytest.mark.parametrize("name", ["dp_lloyd", "balcan"])
def test_other_families_explorations_use_the_same_renderer(toy_views, name):
    at = open_app(**SMALL, alg=name, eps="2.0")
    at.segmented_control(key="alg_view").set_value("Toy view").run()
    assert not at.exception
    assert has_container(at, "exploration")
    assert f"toy view of {name}" in _titles(at)
    algorithm, eps, other = toy_views[-1]
    assert algorithm == name and eps == 2.0 and other <= 4.0 + 1e-9


@pytest.mark.prefetch
def test_other_algorithms_prefetch_the_runs_one_eps_step_away_and_they_equal_runs_made_on_the_move(
        monkeypatch):
    """FriendlyCore's page prefetched its neighbouring ρ runs; every algorithm now does for ε."""
    from concurrent.futures import Future

    at = open_app(**SMALL, alg="dp_lloyd", eps="2.0")
    assert not at.exception
    runs = at.session_state["_cache_run"]
    pending = {key.epsilon: v for key, v in runs.items()
               if key.algorithm == "dp_lloyd" and isinstance(v, Future)}
    assert set(pending) == {1.5, 3.0}
    prefetched = pending[3.0].result(timeout=120)
    monkeypatch.setenv("DPVIZ_PREFETCH", "0")
    cold = open_app(**SMALL, alg="dp_lloyd", eps="3.0")
    _, made = next((k, v) for k, v in cold.session_state["_cache_run"].items()
                   if k.algorithm == "dp_lloyd" and k.epsilon == 3.0)
    np.testing.assert_array_equal(prefetched.centers, made.centers)  # the same seeds, the same run


@pytest.fixture
def toy_steps():
    from dpviz.viz.storyboards import StoryStep, generic_storyboard, register_steps

    def panel(title):
        return lambda result, X, **kw: generic_storyboard(result, X, title=title,
                                                          reference_centers=kw.get("reference_centers"))

    register_steps("dp_lloyd", [StoryStep("a", "the data", "First the rows.", panel("toy a"), None),
                                StoryStep("b", "noisy sums", "Then noisy sums.", panel("toy b"), 3)])
    yield
    storyboards._STEPS.pop("dp_lloyd", None)


def test_step_through_is_one_mechanism_for_any_registered_algorithm(toy_steps):
    """FriendlyCore's Prev/Next step-through is registered steps (dpviz.viz.storyboards); any
    family that registers steps gets the same control on its Explore page."""
    assert [s.key for s in storyboards.story_steps("friendlycore")] == list("abcdefg")
    assert storyboards.story_steps("friendlycore")[3].paper_step == 5
    at = open_app(**SMALL, alg="dp_lloyd", eps="2.0")
    at.toggle(key="step_mode").set_value(True).run()
    assert not at.exception
    narration = " ".join(str(e.value) for e in container(at, "step_narration").markdown)
    assert "Panel 1 of 2 — (a)" in narration and "First the rows." in narration
    at.button(key="step_next").click().run()
    narration = " ".join(str(e.value) for e in container(at, "step_narration").markdown)
    assert "Panel 2 of 2 — (b)** · paper step 3" in narration
    assert any(t.startswith("toy b") for t in _titles(at))


def test_the_row_level_eps_slider_reads_out_the_algorithms_own_budget_from_the_calibration():
    """The main control is the row-level ε; the algorithm's own budget (ρ for a zCDP one) is a
    readout, computed by the registry's calibration (the lead switches it to registry.plan)."""
    import dpviz
    from dpviz.registry import Public, get, plan

    at = open_app(**SMALL, alg="dp_lloyd", eps="2.0")
    assert not at.exception
    spec = get("dp_lloyd")
    the_plan = plan(spec, 2.0, 1e-6, Public(3000, 2, 4, 1.0), spec.make_params())
    readout = " ".join(str(e.value) for e in container(at, "own_budget_readout").caption)
    assert "(ρ-zCDP)" in readout and f"ρ = {the_plan.budget.rho:.4g} " in readout
    assert dpviz.registry.get("dp_lloyd").budget_kind == "zcdp"


@pytest.fixture
def dp_lloyd_redraws():
    from dpviz.viz.noise import REDRAW_HELP, REDRAW_TITLE, RedrawOptions, redraw_exploration

    storyboards.register_exploration("dp_lloyd", REDRAW_TITLE, redraw_exploration, help=REDRAW_HELP,
                                     options=RedrawOptions, compute_label="Re-draw noise ×N")
    yield
    storyboards._EXPLORATIONS["dp_lloyd"] = [v for v in storyboards._EXPLORATIONS.get("dp_lloyd", [])
                                             if v.title != REDRAW_TITLE]


def test_friendlycores_redraw_view_is_an_exploration_any_family_can_register(dp_lloyd_redraws):
    """"Re-draw noise" (dpviz/viz/noise.py) with its settings and its compute button is drawn by
    the shared renderer; registered for DP-Lloyd it works there too (fresh private noise per draw,
    the same data and budget)."""
    assert "Re-draw noise" in [v.title for v in storyboards.explorations("friendlycore")]
    at = open_app(**SMALL, alg="dp_lloyd", eps="2.0")
    at.segmented_control(key="alg_view").set_value("Re-draw noise").run()
    assert not at.exception
    assert "Press **Re-draw noise ×N**" in " ".join(str(i.value) for i in at.info)
    at.number_input(key="explore_opt_dp_lloyd_n_draws").set_value(4).run()
    at.button(key="explore_compute_dp_lloyd").click().run()
    assert not at.exception
    assert any("4 of 4 draws released centers" in t for t in _titles(at))
    draws = [v for k, v in at.session_state["_cache_redraw"].items() if k[1] == "dp_lloyd"]
    assert len(draws) == 4
    shown = _result_generic(at)
    centers = [d.centers for d in draws] + [shown.centers]
    assert all(not np.array_equal(a, b) for i, a in enumerate(centers) for b in centers[i + 1:])
    assert {str(d.guarantee) for d in draws} == {str(shown.guarantee)}


def _result_generic(at):
    return next(v for k, v in at.session_state["_cache_run"].items()
                if k.algorithm == "dp_lloyd" and k.epsilon == 2.0 and not hasattr(v, "done"))


# ----------------------------------------------------------------------------- FriendlyCore's ε control


def _fc_plan(eps: float, delta: float = 1e-6):
    """The registry's plan for FriendlyCore on SMALL's data (n = 3000, d = 2, k = 4, Λ = 1, t = 60)."""
    from dpviz.registry import Public, get, plan

    spec = get("friendlycore")
    return plan(spec, eps, delta, Public(3000, 2, 4, 1.0), spec.make_params(n_tuples=60, r_min=0.001))


def _readout(at) -> str:
    return " ".join(str(e.value) for e in container(at, "own_budget_readout").caption)


def test_friendlycores_main_control_is_the_row_level_eps_and_rho_is_the_plans_readout():
    at = open_app(**SMALL, eps="2.0")
    assert not at.exception
    keys = {s.key for s in at.select_slider}
    assert "eps_slider" in keys and "rho_slider" not in keys
    assert at.select_slider(key="eps_slider").value == 2.0
    want = _fc_plan(2.0)
    assert "(ρ-zCDP)" in _readout(at) and f"ρ = {want.budget.rho:.4g} " in _readout(at)
    # the run spends the plan's ρ, and its row-level statement is within the target
    result = _result(at)
    assert result.ledger.total().rho == pytest.approx(want.budget.rho, rel=1e-9)
    assert "rho" not in at.session_state["params"]  # ρ is a readout only (issue 33)
    at.select_slider(key="eps_slider").set_value(5.0).run()
    assert not at.exception
    assert f"ρ = {_fc_plan(5.0).budget.rho:.4g} " in _readout(at)
    assert dict(at.query_params)["eps"] == "5.0" and "friendlycore.rho" not in dict(at.query_params)


@pytest.mark.parametrize("key", ["rho", "friendlycore.rho"])
def test_an_old_rho_link_opens_the_same_run_at_exactly_that_rho(key):
    """A link made with the old ρ slider: the run spends exactly that (ρ, δ) (the same draw as the
    page made before, private stage on the same seed stream), the ε slider sits at that budget's
    row-level ε (budget_from_rho → plan_at_budget) and the page shows both; moving ε plans from the
    target instead. ρ is never written back (issue 33): the URL carries the row-level ε."""
    import dpviz.clustering.friendlycore.pipeline as fc
    from app.components.friendlycore import run as app_run
    from dpviz.privacy import ZCDP
    from dpviz.registry import Public, get, plan_at_budget

    at = open_app(**SMALL, **{key: "0.251"})
    assert not at.exception
    spec = get("friendlycore")
    at_budget = plan_at_budget(spec, ZCDP(0.251, 1e-6), Public(3000, 2, 4, 1.0),
                               spec.make_params(n_tuples=60, r_min=0.001))
    assert at.select_slider(key="eps_slider").value == at_budget.guarantee.eps
    assert "ρ = 0.251 " in _readout(at)
    assert "0.251" in " ".join(str(e.value) for e in container(at, "rho_link_note").info)
    # the very run the ρ slider made: fc_private_stage at ρ = 0.251, δ = 1e-6 on the same streams
    ds, stage, cfg = at.session_state["_explore_last"]
    before = fc.fc_private_stage(ds.X, stage, rho=0.251, delta=1e-6, radius=cfg.radius, r_min=cfg.r_min,
                                 preset=cfg.preset, n_declared=int(ds.n), fallback=cfg.fallback,
                                 rng=np.random.default_rng(app_run.seeds(cfg.seed)[1]))
    now = _result(at)
    assert (now.centers is None) == (before.centers is None)
    if now.centers is not None:
        np.testing.assert_array_equal(now.centers, before.centers)
    assert now.ledger.total() == before.ledger.total()
    q = dict(at.query_params)
    assert "friendlycore.rho" not in q and "rho" not in q and q["eps"] == repr(at_budget.guarantee.eps)
    assert "rho" not in at.session_state["params"]
    at.select_slider(key="eps_slider").set_value(3.0).run()
    assert not at.exception and not has_container(at, "rho_link_note")
    assert "friendlycore.rho" not in dict(at.query_params)
    assert f"ρ = {_fc_plan(3.0).budget.rho:.4g} " in _readout(at)


# ----------------------------------------------------------------------------- one Explore path


def test_the_explore_page_names_no_algorithm_and_calls_one_hook_for_every_one():
    """app/views/explore.py has one path: every algorithm is drawn by live_pages.render (FriendlyCore's
    page is a registered hook like any family's could be); the page calls no FriendlyCore function."""
    import ast
    from pathlib import Path

    source = (Path(__file__).parents[2] / "app/views/explore.py").read_text()
    tree = ast.parse(source)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert "friendlycore" not in source.lower().replace("friendlycore's", "")
    assert not {"fc_explore", "explore_live", "run", "controls"} & imported
    assert not [n for n in names if n.startswith("fc_") or "rho" in n or "core" in n]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "render"]
    assert [ast.unparse(c.func) for c in calls] == ["live_pages.render"]


@pytest.fixture
def toy_live_page():
    from app.components import live_pages

    before = live_pages.registered()
    live_pages.register("dp_lloyd", "toy_live_page")
    yield
    live_pages._PAGES.clear()
    live_pages._PAGES.update(before)


def test_any_family_can_register_a_live_page_and_explore_draws_it(toy_live_page):
    at = open_app(**SMALL, alg="dp_lloyd")
    assert not at.exception
    text = " ".join(m.value for m in container(at, "toy_live_page").markdown)
    assert text == "Toy live page for dp_lloyd (Λ = 1, n = 3000)"
    assert not has_container(at, "own_budget_readout")  # the generic page was not drawn
    fc = open_app(**SMALL)  # FriendlyCore's registered page, through the same hook
    assert has_container(fc, "main_panel") and not has_container(fc, "toy_live_page")

"""Every label names who answered (issue 33, item 4): the algorithm, its backup, or no one (⊥).

``dpviz.registry.answered_by`` reads the released trace (the fallback step's ``used`` bit and
``method``); the sweep frames carry it per run (``answered_by``) and the Compare and Budget hovers
count it per point; Explore's main panel names the backup in its note and the centers' hover.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import dpviz
from dpviz.data import fig6_blobs
from dpviz.registry import answered_by
from dpviz.viz import main_panel
from dpviz.viz.compare import metric_figure, structure_figure
from dpviz.viz.sweeps import accuracy_figure, success_figure

BACKUP = "grid coreset (FriendlyCore clustering's backup)"


@pytest.fixture(scope="module")
def blobs():
    return fig6_blobs(20_000, rng=0)


def _tight() -> np.ndarray:
    """Four tight, far-apart clusters (sd 0.02), 40,000 rows: the core forms at ε = 30, t = 400."""
    rng = np.random.default_rng(0)
    C = rng.uniform(-0.7, 0.7, size=(4, 2))
    return np.clip(C[rng.integers(0, 4, 40_000)] + rng.normal(size=(40_000, 2)) * 0.02, -1, 1)


@pytest.fixture(scope="module")
def runs(blobs):
    """FriendlyCore where its backup answers (t = 200, ε = 3: the core does not form on 20k rows),
    where its own core answers (t = 400 at ε = 30), where nothing is released (backup off), and
    DP-Lloyd."""
    kw = dict(delta=1e-6, radius=1.0, rng=0, n_declared=20_000)
    return {
        "backup": dpviz.run("friendlycore", blobs.X, 8, epsilon=3.0, n_tuples=200, **kw),
        "own": dpviz.run("friendlycore", _tight(), 4, epsilon=30.0, n_tuples=400, delta=1e-6, radius=1.5,
                         rng=2, n_declared=40_000),
        "none": dpviz.run("friendlycore", blobs.X, 8, epsilon=0.3, fallback=False, **kw),
        "lloyd": dpviz.run("dp_lloyd", blobs.X, 8, epsilon=3.0, **kw),
    }


def test_the_backup_is_named_when_it_answered(runs):
    spec = dpviz.registry.get("friendlycore")
    res = runs["backup"]
    assert spec.structure_ok(res) is False and res.centers is not None  # the core did not form
    a = answered_by(res)
    assert (a.algorithm, a.backup, a.released, a.own) == ("FriendlyCore clustering", "grid coreset", True,
                                                           False)
    assert a.who == BACKUP
    assert a.label(8) == f"{BACKUP}: 8 private centers"
    assert "FriendlyCore clustering: 8" not in a.label(8)


def test_the_algorithm_is_named_when_its_own_structure_answered(runs):
    res = runs["own"]
    assert dpviz.registry.get("friendlycore").structure_ok(res) is True
    a = answered_by(res)
    assert a.own and a.who == "FriendlyCore clustering"
    assert a.label(4) == "FriendlyCore clustering: 4 private centers"
    assert answered_by(runs["lloyd"]).label(8) == "DP-Lloyd: 8 private centers"


def test_nothing_released_names_no_one(runs):
    a = answered_by(runs["none"])
    assert not a.released and a.who == "no one (⊥)"
    assert a.label() == "FriendlyCore clustering: no centers (⊥)"


def test_the_main_panel_names_the_backup_in_its_note_and_the_centers_hover(runs, blobs):
    fig = main_panel.main_panel_figure(runs["backup"], blobs.X, magnification=5.0)
    note = fig.layout.annotations[0].text.replace("<br>", " ")
    assert f"Answered by {BACKUP}" in note
    (centers,) = [t for t in fig.data if t.name.replace("<br>", " ") == main_panel.CENTERS_NAME]
    assert BACKUP in centers.hovertemplate
    fig = main_panel.main_panel_figure(runs["own"], _tight(), magnification=5.0)
    (centers,) = [t for t in fig.data if t.name.replace("<br>", " ") == main_panel.CENTERS_NAME]
    assert "answered by FriendlyCore clustering<" in centers.hovertemplate


def test_a_sweep_frame_records_who_answered_each_run(blobs, runs):
    sw = dpviz.sweeps.sweep(blobs, 8, algorithms={"friendlycore": {"n_tuples": 200}, "dp_lloyd": {}},
                            epsilons=[3.0], delta=1e-6, n_declared=20_000, reps=1, rng=0)
    f = sw.frame.set_index("algorithm")
    assert f.loc["friendlycore", "answered_by"] == BACKUP  # the core does not form here (as above)
    assert f.loc["dp_lloyd", "answered_by"] == "DP-Lloyd"


def _frame() -> pd.DataFrame:
    """A sweep frame: FriendlyCore answered by its core in 1 of 4 runs at ε = 10, by its backup in
    the rest (and in all 4 at ε = 1); DP-Lloyd by itself."""
    rows = []
    for rep in range(4):
        for eps in (1.0, 10.0):
            own = eps == 10.0 and rep == 0
            rows.append(dict(algorithm="friendlycore", title="FriendlyCore clustering", private=True,
                             epsilon=eps, delta=1e-6, rep=rep, n=1000, budget_kind="zcdp", budget=eps / 50,
                             budget_delta=1e-8, guarantee_eps=eps, guarantee_delta=1e-7, loss=0.1,
                             labeling_failure=np.nan, center_error=np.nan, released=True,
                             structure_ok=own, success=own, fallback=not own, seconds=0.01,
                             stage_seconds=0.1, failure=None,
                             answered_by="FriendlyCore clustering" if own else BACKUP))
            rows.append(dict(algorithm="dp_lloyd", title="DP-Lloyd", private=True, epsilon=eps, delta=1e-6,
                             rep=rep, n=1000, budget_kind="zcdp", budget=eps / 20, budget_delta=0.0,
                             guarantee_eps=eps, guarantee_delta=1e-6, loss=0.2, labeling_failure=np.nan,
                             center_error=np.nan, released=True, structure_ok=None, success=True,
                             fallback=False, seconds=0.01, stage_seconds=0.0, failure=None,
                             answered_by="DP-Lloyd"))
    return pd.DataFrame(rows, columns=list(dpviz.sweeps.COLUMNS))


def _hovers(fig, name_part: str) -> list[str]:
    out = []
    for tr in fig.data:
        if name_part in (tr.name or "") and tr.text is not None and tr.hovertemplate and "%{text}" in \
                tr.hovertemplate:
            out += [str(t) for t in tr.text]
    return out


@pytest.mark.parametrize("build", [metric_figure, structure_figure])
def test_compare_hovers_count_who_answered(build):
    fig = build(_frame())
    fc = _hovers(fig, "FriendlyCore")
    assert f"answered by: {BACKUP} in 4 of 4 runs" in " ".join(fc)
    assert f"answered by: {BACKUP} in 3 of 4 runs, FriendlyCore clustering in 1" in " ".join(fc)
    assert all("answered by: DP-Lloyd in 4 of 4 runs" in t for t in _hovers(fig, "DP-Lloyd"))


@pytest.mark.parametrize("build", [accuracy_figure, success_figure])
def test_budget_hovers_count_who_answered(build):
    paper = "friendlycore[preset=paper]"  # a Budget name with parameters
    frame = _frame().assign(algorithm=lambda f: f["algorithm"].replace({"friendlycore": paper}))
    fig = build(frame)
    fc = " ".join(_hovers(fig, "FriendlyCore"))
    assert f"answered by: {BACKUP} in 4 of 4 runs" in fc
    assert f"{BACKUP} in 3 of 4 runs, FriendlyCore clustering in 1" in fc
    assert "answered by: DP-Lloyd in 4 of 4 runs" in " ".join(_hovers(fig, "DP-Lloyd"))


def test_frames_stored_before_the_column_give_no_hover_line():
    fig = accuracy_figure(_frame().drop(columns=["answered_by"]))
    assert all(t == "" for tr in fig.data if tr.text is not None for t in tr.text)
    json.dumps(fig.to_plotly_json(), default=str)  # still a valid figure

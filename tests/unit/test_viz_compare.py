"""The Compare figures: traces match the frame, hovers say what every number is."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpviz.sweeps import COLUMNS, REFERENCE, SIMULATION, summarize
from dpviz.viz.compare import (
    available_metrics,
    clicked_point,
    compare_figures,
    metric_figure,
    structure_figure,
)

EPS = (1.0, 3.0, 10.0)


def _frame() -> pd.DataFrame:
    """Two private algorithms (one with a structure step) and the reference, 4 repetitions."""
    rng = np.random.default_rng(0)
    rows = []
    for rep in range(4):
        for name, title, kind, struct in (("alpha", "Alpha", "zcdp", True), ("beta", "Beta", "pure", False)):
            for eps in EPS:
                loss = float(rng.uniform(0, 1 / eps))
                rows.append(dict(algorithm=name, title=title, private=True, epsilon=eps, delta=1e-6, rep=rep,
                                 budget_kind=kind, budget=eps / 20 if kind == "zcdp" else eps,
                                 budget_delta=1e-8 if kind == "zcdp" else 0.0, guarantee_eps=eps * 0.99999,
                                 guarantee_delta=1e-7 if kind == "zcdp" else 0.0, loss=loss,
                                 labeling_failure=loss / 2, center_error=math.nan,
                                 released=rep > 0 or eps > 1,
                                 structure_ok=(rep % 2 == 0) if struct else None, seconds=0.01 * (rep + 1),
                                 stage_seconds=0.5 if struct else 0.0, failure=None))
        rows.append(dict(algorithm="ref", title="Reference", private=False, epsilon=math.inf, delta=0.0,
                         rep=rep, budget_kind="none", budget=math.nan, budget_delta=math.nan,
                         guarantee_eps=math.nan, guarantee_delta=math.nan, loss=0.01 * rep,
                         labeling_failure=0.0, center_error=math.nan,
                         released=True, structure_ok=None, seconds=0.2, stage_seconds=0.0, failure=None))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _named(fig, name):
    return [t for t in fig.data if t.name == name]


def test_loss_curves_bands_and_reference_match_the_frame():
    f = _frame()
    fig = metric_figure(f, "loss")
    s = summarize(f, metric="loss")
    # alpha has a structure step: its "with fallback" line is the frame's own numbers
    for name, line, title in (("alpha", "alpha|with fallback", "Alpha with fallback"),
                              ("beta", "beta", "Beta")):
        (med,) = _named(fig, title)
        g = s[s.algorithm == name].sort_values("epsilon")
        assert list(med.x) == list(EPS)
        np.testing.assert_allclose(med.y, g["median"], rtol=1e-12)
        upper, lower = _named(fig, f"{line} upper")[0], _named(fig, f"{line} lower")[0]
        np.testing.assert_allclose(upper.y, g["q90"], rtol=1e-12)
        np.testing.assert_allclose(lower.y, g["q10"], rtol=1e-12)
        assert lower.fill == "tonexty"
        assert [c[9] for c in med.customdata] == [name] * 3  # a click opens the algorithm
        assert SIMULATION in med.hovertemplate and "row-level ε" in med.hovertemplate
    (ref,) = _named(fig, f"Reference ({REFERENCE})")
    assert list(ref.y) == [pytest.approx(0.015)] * 2 and list(ref.x) == [1.0, 10.0]
    assert REFERENCE in ref.hovertemplate and ref.line.dash == "dot"
    assert fig.layout.xaxis.type == "log"
    alpha, beta = _named(fig, "Alpha with fallback")[0], _named(fig, "Beta")[0]
    assert "%{text}" in alpha.hovertemplate  # each point's native budget, in its own kind
    assert list(alpha.text) == [f"native budget ρ = {e / 20:.3g} (zCDP), δ = 1e-08" for e in EPS]
    assert list(beta.text) == [f"native budget ε = {e:.3g} (pure DP)" for e in EPS]


def test_fallback_algorithms_are_two_lines_alone_and_with_fallback():
    """Issue 16: Compare drew FriendlyCore's fallback answers under its name (as Budget did)."""
    f = _frame()
    fig = metric_figure(f, "loss")
    assert not _named(fig, "Alpha")  # old code: one line, the fallback's answers included
    (alone,) = _named(fig, "Alpha alone (fallback answers = no centers)")
    a = f[f.algorithm == "alpha"]
    want = [np.median(np.where(g["structure_ok"].astype(bool), g["loss"], 1.0))
            for _, g in a.groupby("epsilon")]
    np.testing.assert_allclose(alone.y, want, rtol=1e-12)
    assert [c[9] for c in alone.customdata] == ["alpha"] * 3
    assert not _named(fig, "Beta alone (fallback answers = no centers)")  # no structure step
    lab = metric_figure(f, "labeling_failure")
    (alone_lab,) = _named(lab, "Alpha alone (fallback answers = no centers)")
    want = [np.median(g.loc[g["structure_ok"].astype(bool), "labeling_failure"])
            for _, g in a.groupby("epsilon")]
    np.testing.assert_allclose(alone_lab.y, want, rtol=1e-12)


def test_every_figure_builds_and_only_available_metrics_are_drawn():
    figs = compare_figures(_frame())
    assert available_metrics(_frame()) == ["loss", "labeling_failure"]  # no true centers
    assert set(figs) == {"loss", "labeling_failure", "seconds", "structure"}
    (alpha,) = _named(figs["seconds"], "Alpha")  # private run + shared stage
    np.testing.assert_allclose(alpha.y, [0.525] * 3, rtol=1e-12)
    assert figs["seconds"].layout.yaxis.type == "log"


def test_structure_share_solid_where_defined_released_share_dashed_otherwise():
    fig = structure_figure(_frame())
    (alpha,) = _named(fig, "Alpha")
    np.testing.assert_allclose(alpha.y, [0.5, 0.5, 0.5])  # reps 0 and 2 of 4
    (beta,) = _named(fig, "Beta (released)")
    np.testing.assert_allclose(beta.y, [0.75, 1.0, 1.0])  # rep 0 released nothing at ε = 1
    assert beta.line.dash == "dash" and alpha.line.dash == "solid"
    assert all(t.name != "Reference" for t in fig.data)


def test_clicked_point_reads_the_algorithm_and_epsilon():
    med = _named(metric_figure(_frame()), "Beta")[0]
    cd = list(med.customdata[1])
    assert clicked_point({"customdata": cd}) == ("beta", 3.0)
    assert clicked_point({"customdata": {str(i): v for i, v in enumerate(cd)}}) == ("beta", 3.0)
    assert clicked_point({"customdata": [1.0, 2.0]}) is None
    assert clicked_point({"x": 1.0}) is None


def test_an_empty_frame_gives_empty_figures():
    figs = compare_figures(pd.DataFrame(columns=list(COLUMNS)))
    assert set(figs) == {"seconds", "structure"} and not figs["structure"].data


def test_budget_sweep_legends_name_registered_algorithms_by_their_title():
    from dpviz.registry import get
    from dpviz.viz.sweeps import algorithm_label

    assert algorithm_label("origin") == get("origin").title
    assert algorithm_label("friendlycore[preset=paper]") == "FriendlyCore (paper's split)"
    assert algorithm_label("not registered") == "not registered"

"""The Balcan storyboard builders build from a real run and show what they claim."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from dpviz.clustering.balcan import BalcanParams, balcan_kmeans
from dpviz.data.bounds import clip_to_ball
from dpviz.viz import balcan as vb
from dpviz.viz.storyboards import storyboard_builder


@pytest.fixture(scope="module")
def run() -> tuple:
    rng = np.random.default_rng(0)
    mu = rng.standard_normal((3, 12))
    X = clip_to_ball(mu[rng.integers(0, 3, 1500)] + 0.1 * rng.standard_normal((1500, 12)), 4.0)
    return balcan_kmeans(X, 3, epsilon=2.0, radius=4.0, rng=1), X, mu


def test_storyboard_builds_six_panels(run: tuple) -> None:
    res, X, mu = run
    fig = vb.balcan_storyboard(res, X, reference_centers=mu)
    assert isinstance(fig, go.Figure)
    titles = [a.text.replace("<br>", " ") for a in fig.layout.annotations]  # wrapped to fit
    assert titles[: len(vb.PANELS)] == list(vb.PANELS)
    names = {t.name for t in fig.data}
    assert {"f(m)", "recovered (Alg. 4)", "released (after Lloyd)", "L(Z^(t)) in ℝ^p"} <= names
    assert "ε=2" in fig.layout.title.text  # the row-level guarantee is in the title
    fig.to_json()  # serializable for the app


def test_registered_storyboard_is_this_one(run: tuple) -> None:
    assert storyboard_builder("balcan") is vb.balcan_storyboard


def test_panels_match_the_trace(run: tuple) -> None:
    res = run[0]
    bars = vb.partition_traces(res)
    levels = res.step("partition").data["active_per_level"]
    assert len(bars) == len(levels) and list(bars[0].y) == list(levels[0])
    cand = vb.candidate_traces(res)
    assert len(cand[0].x) == res.step("candidates").data["centers"].shape[0]
    ls = vb.local_search_traces(res)
    assert len(ls[0].y) == res.step("config").data["T3"] + 1
    f = vb.activation_traces(res)[0]
    assert np.all(np.diff(f.y) >= 0) and min(f.y) >= 0 and max(f.y) <= 1  # f is a CDF tail in m
    sp = vb.swap_probability_figure(res)
    assert len(sp.data) == 3


def test_theory_profile_storyboard_shows_no_split() -> None:
    rng = np.random.default_rng(1)
    X = clip_to_ball(rng.standard_normal((300, 8)), 3.0)
    res = balcan_kmeans(X, 2, epsilon=1.0, radius=3.0, params=BalcanParams(profile="theory", T3=2), rng=0)
    fig = vb.balcan_storyboard(res, X)
    assert "nothing splits" in fig.layout.title.text
    assert all(list(b.y) == [1, 0] for b in vb.partition_traces(res))


def test_partition_cells_figure(run: tuple) -> None:
    res = run[0]
    fig = vb.partition_cells_figure(res, shift=0)
    level = res.step("partition").data["cubes"][0][1]
    depth_traces = [t for t in fig.data if t.name.startswith("depth")]
    assert len(depth_traces) == len(np.unique(level))
    # One closed square (5 vertices + a gap) per active cube.
    assert sum(len(t.x) for t in depth_traces) == 6 * len(level)

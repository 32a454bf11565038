"""Storyboards by algorithm: registered builders, and the generic one for any Result."""

from __future__ import annotations

import numpy as np
import pytest

import dpviz
from dpviz.data import fig6_blobs
from dpviz.viz.storyboards import generic_storyboard, register_storyboard, result_label, storyboard_builder


@pytest.fixture(scope="module")
def blobs():
    return fig6_blobs(4_000, rng=0)


def test_friendlycore_has_its_own_storyboard_and_others_the_generic_one():
    assert storyboard_builder("friendlycore") is not generic_storyboard
    assert storyboard_builder("no-such-algorithm") is generic_storyboard


def test_generic_storyboard_names_method_and_guarantee(blobs):
    res = dpviz.run("dp_lloyd", blobs.X, 8, epsilon=3.0, delta=1e-6, radius=1.0, rng=0, n_declared=4000)
    ref = dpviz.run("kmeans++", blobs.X, 8, epsilon=3.0, delta=1e-6, radius=1.0, rng=0)
    fig = generic_storyboard(res, blobs.X, reference_centers=ref.centers)
    names = [t.name for t in fig.data]
    assert names == ["data", "non-private k-means++ (diagnostic)", "released centers"]
    assert len(fig.data[-1].x) == 8
    title = fig.layout.title.text
    assert "dp_lloyd" in title and "ε=3" in title and "simulation, not a release" in title
    assert "no privacy guarantee" in result_label(ref)


def test_a_failure_is_said_not_drawn(blobs):
    res = dpviz.run("friendlycore", blobs.X, 8, epsilon=0.5, delta=1e-6, radius=1.0, rng=0,
                    n_declared=4000, fallback=False)
    assert res.centers is None
    fig = generic_storyboard(res, blobs.X)
    assert "output ⊥" in fig.layout.title.text
    assert all(t.name != "released centers" for t in fig.data)


def test_a_registered_builder_is_used(blobs):
    calls = []
    register_storyboard("toy-viz", lambda r, X, **kw: calls.append(kw) or "figure")
    assert storyboard_builder("toy-viz")(None, blobs.X, reference_centers=None) == "figure"
    assert calls == [{"reference_centers": None}]
    np.testing.assert_equal(len(calls), 1)

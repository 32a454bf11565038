"""Figure builders of the Mixtures page: every curve says what it is; the buckets split at T."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mixtures import explore as ex
from dpviz.mixtures.learner import private_gmm_1d
from dpviz.viz import mixtures as vm


@pytest.fixture(scope="module")
def hard_run():
    x, sc = ex.sample("hard", 3, 20_000, 0)
    return x, sc.truth, private_gmm_1d(x, 3, epsilon=1.0, delta=1e-6, n_declared=20_000, rng=0)


def test_density_figure_labels_private_simulation_and_diagnostics(hard_run):
    x, truth, res = hard_run
    fig = vm.density_figure(x, res, truth=truth, em=truth)
    names = [t.name for t in fig.data]
    assert "learned mixture (private release)" in names and "truth (simulation)" in names
    assert "data histogram (NOT private)" in names and "EM fit (NOT private)" in names
    assert fig.layout.yaxis.type == "log"
    # one dotted line per released crude group
    assert len(fig.layout.shapes) == len(res.step("groups").data["means"])


def test_gap_buckets_figure_colours_split_at_the_threshold(hard_run):
    _, _, res = hard_run
    fig = vm.gap_buckets_figure(res, top=30)
    bars = fig.data[0]
    T = res.step("crude_candidates").data["threshold"]
    colours = np.asarray(bars.marker.color)
    assert np.all((np.asarray(bars.y) >= T) == (colours == vm.PRIVATE))
    assert (colours == vm.DIAG).any() and (colours == vm.PRIVATE).any()
    assert fig.data[1].x.size == res.step("crude_candidates").data["scale"].size


def test_theory_figure_says_constants_are_set_to_one():
    fig = vm.theory_figure(k=3, alpha=0.1, eps=1.0, delta=1e-6)
    assert "constants and polylogs set to 1" in fig.layout.title.text
    heat = next(t for t in fig.data if t.type == "heatmap")
    assert set(np.unique(heat.z)) <= set(range(5))
    no_logs = vm.theory_figure(k=3, alpha=0.1, eps=1.0, delta=1e-6, logs=False)
    assert "ln(1/δ) set to 1" in no_logs.layout.title.text


def test_demo2d_figure_is_labelled_inspired_by():
    X, sc = ex.sample("clusters_2d", 2, 600, 0)
    run = ex.run_2d(X, 2, epsilon=1.0, bound=10.0, seed=0, truth=sc.truth)
    fig = vm.demo2d_figure(X, run.result, truth=sc.truth, bound=10.0)
    assert "not the paper's algorithm" in fig.layout.title.text
    assert sum(t.name == "picks (private release)" for t in fig.data) == 2

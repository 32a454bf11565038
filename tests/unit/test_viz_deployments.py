"""dpviz.viz.deployments: the strip of published ε with the user's ε as a line."""

import math

import pytest

from dpviz.privacy.deployments import DEPLOYMENTS
from dpviz.viz.deployments import YOUR_EPS, deployments_figure, short_label


def _by_name(fig):
    return {t.name: t for t in fig.data}


@pytest.mark.parametrize("eps", [0.01, 1.0, 20.0, 50.0])
def test_one_marker_per_deployment_and_the_users_eps_as_a_line(eps):
    fig = deployments_figure(eps)
    traces = _by_name(fig)
    assert set(traces) == {"central DP", "local DP", YOUR_EPS}
    central = sorted(traces["central DP"].x)
    local = sorted(traces["local DP"].x)
    assert central == sorted(d.epsilon for d in DEPLOYMENTS if d.model == "central")
    assert local == [2.0, 4.0, 8.0, 16.0]  # Apple's four local-DP features
    assert list(traces[YOUR_EPS].x) == [eps, eps]
    # the log axis shows every marker and the line
    low, high = fig.layout.xaxis.range
    assert fig.layout.xaxis.type == "log"
    for x in [*central, *local, eps]:
        assert low < math.log10(x) < high
    assert f"your ε = {eps:.3g} (one row)" in fig.layout.annotations[0].text
    assert "units differ" in fig.layout.title.text


def test_rows_are_ordered_by_eps_and_labels_are_short():
    fig = deployments_figure(1.0)
    order = list(fig.layout.yaxis.categoryarray)
    eps_of = {short_label(d): d.epsilon for d in DEPLOYMENTS}
    assert len(order) == len(DEPLOYMENTS) == len(eps_of)
    assert [eps_of[label] for label in order] == sorted(d.epsilon for d in DEPLOYMENTS)
    assert "US Census Bureau · 2020 Census Redistricting Data" in order


def test_bad_eps_is_refused():
    with pytest.raises(ValueError, match="'eps' parameter of beside"):
        deployments_figure(0.0)

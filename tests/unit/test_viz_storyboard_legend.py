"""Legends on the live storyboard panels (c)-(g) (issue 16): one entry per marker kind, in the
grid's empty sixth cell so that fixed margins hold it, and x1/x2 axis titles on every panel."""

import numpy as np
import pytest
from _viz_fakes import fake_fc_result

from dpviz.viz.storyboard import storyboard_figure

LIVE = dict(panels="cdefg", cols=3, legend_in_free_cell=True, tick_labels=False,
            margin=dict(l=25, r=10, t=70, b=25))


def _entries(fig) -> list[str]:
    return [t.name for t in fig.data if t.showlegend is not False]


def _unwrapped(name: str) -> str:
    """A legend entry as one line (entries in the free cell wrap to its width, issue 43)."""
    return name.replace("<br>", " ")


@pytest.mark.parametrize("points", ["vector", "raster"])
def test_every_trace_belongs_to_exactly_one_legend_entry(points):
    result, X = fake_fc_result()
    fig = storyboard_figure(result, X, points=points, **LIVE)
    entries = _entries(fig)
    assert len(entries) == len(set(entries))
    shown_groups = {t.legendgroup for t in fig.data if t.showlegend is not False}
    assert {t.legendgroup for t in fig.data} == shown_groups  # no trace without an entry
    assert fig.layout.showlegend is True


def test_the_unexplained_markers_of_issue_16_have_entries():
    result, X = fake_fc_result()
    fig = storyboard_figure(result, X, points="raster", **LIVE)
    by_name = {_unwrapped(t.name): t for t in fig.data if t.showlegend is not False}
    symbol = {n: getattr(t.marker, "symbol", None) for n, t in by_name.items()}
    assert symbol["removed tuples — non-private diagnostic"] == "x"  # the red ×
    assert symbol["reference tuple — non-private diagnostic"] == "circle-open"  # black circles
    assert symbol["non-private averages — non-private diagnostic"] == "diamond-open"
    assert symbol["final centers (private Lloyd step) — private"] == "star"
    assert "data (input, never released)" in by_name
    # clouds drawn once per coordinate / cluster: one entry each, not k
    assert sum("cloud" in n for n in by_name) == 1
    assert sum("nearest center" in n for n in by_name) == 1


def test_legend_sits_in_the_free_cell_and_margins_stay_fixed():
    result, X = fake_fc_result()
    fig = storyboard_figure(result, X, **LIVE)
    lay = fig.layout
    assert (lay.margin.l, lay.margin.b, lay.margin.autoexpand) == (25, 25, False)
    assert lay.xaxis6.visible is False and lay.yaxis6.visible is False
    assert lay.legend.x == pytest.approx(lay.xaxis6.domain[0])
    assert lay.legend.y == pytest.approx(lay.yaxis6.domain[1])
    assert (lay.legend.xanchor, lay.legend.yanchor) == ("left", "top")
    # inside the plot area: between 0 and 1 in paper coordinates
    assert 0 <= lay.legend.x <= 1 and 0 <= lay.legend.y <= 1
    assert not {t.xaxis for t in fig.data} & {"x6"}


def test_axis_titles_x1_x2_on_every_panel():
    result, X = fake_fc_result()
    fig = storyboard_figure(result, X, **LIVE)
    for s in ["", "2", "3", "4", "5"]:
        assert fig.layout[f"xaxis{s}"].title.text == "x1"
        assert fig.layout[f"yaxis{s}"].title.text == "x2"


def test_legend_in_free_cell_needs_a_free_cell():
    result, X = fake_fc_result()
    with pytest.raises(ValueError, match="free cell"):
        storyboard_figure(result, X, panels="cdef", cols=2, legend_in_free_cell=True)
    assert np.isfinite(storyboard_figure(result, X, panels="cde", cols=2,
                                         legend_in_free_cell=True).layout.legend.x)

"""Issue 43: every chart's one-line summary began "Chart: Chart." when the figure had no title."""

from __future__ import annotations

import plotly.graph_objects as go

from app.components import a11y


def test_an_untitled_figure_is_not_called_chart_twice():
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 0], name="data"))
    fig.update_layout(xaxis_title="PC1", yaxis_title="PC2")
    line = a11y.describe(fig)
    assert line == "1 series: data. x axis: PC1, y axis: PC2."
    assert f"Chart: {line}".count("Chart") == 1


def test_a_titled_figure_starts_with_its_title():
    fig = go.Figure(go.Scatter(x=[0], y=[0], name="centers"), layout={"title": "Fig. 6 blobs."})
    assert a11y.describe(fig) == "Fig. 6 blobs. 1 series: centers."

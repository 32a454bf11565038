"""Ledger sunburst/treemap and the privacy statement's display strings."""

import math

import numpy as np
import pytest
from _viz_fakes import fake_ledger

from dpviz.privacy.accounting import row_level_statement
from dpviz.viz.privacy import (
    UNIT_COLORS,
    ledger_figure,
    ledger_frame,
    ledger_table,
    privacy_summary,
)


def test_display_values_nest_under_parallel_and_sequential_nodes():
    df = ledger_frame(fake_ledger(rho=2.0)).set_index("id")
    assert df.loc["fc_clustering", "display"] == pytest.approx(2.0)
    lloyd = df[df["parent"] == "fc_clustering/NoisyLloydStep"]
    # parallel: each child costs ρ/2 = 1 (like its parent) but they share the parent's area
    np.testing.assert_allclose(lloyd["rho"], 1.0)
    assert lloyd["display"].sum() <= df.loc["fc_clustering/NoisyLloydStep", "display"]
    assert lloyd["display"].sum() == pytest.approx(1.0)
    kids = df[df["parent"] == "fc_clustering"]
    assert kids["display"].sum() <= 2.0


@pytest.mark.parametrize("kind", ["sunburst", "treemap"])
def test_ledger_figure_hover_carries_delta_sigma_sensitivity_unit(kind):
    fig = ledger_figure(fake_ledger(), kind=kind)
    tr = fig.data[0]
    assert tr.type == kind and tr.branchvalues == "total"
    assert len(tr.ids) == 8
    i = list(tr.labels).index("FriendlyAvg[0]")
    rho, delta, sigma, sens, unit = tr.customdata[i][:5]
    assert (rho, delta, sigma, sens, unit) == ("0.5", "5e-07", "0.02", "2", "row")
    assert "δ = %{customdata[1]}" in tr.hovertemplate
    assert "ρ = 1" in fig.layout.title.text
    fills = dict(zip(tr.labels, tr.marker.colors, strict=True))
    assert fills["FriendlyCore(match_1/7)"] == UNIT_COLORS["tuple"]
    assert fills["FriendlyAvg[0]"] == UNIT_COLORS["row"]


def test_ledger_figure_rejects_unknown_kind_and_table_lists_leaves():
    with pytest.raises(ValueError, match="'kind' parameter of ledger_figure"):
        ledger_figure(fake_ledger(), kind="pie")
    t = ledger_table(fake_ledger())
    assert len(t) == 5 and set(t["unit"]) == {"row", "tuple"}


def test_privacy_summary_strings():
    st = row_level_statement(fake_ledger(rho=0.1, delta=1e-6), 1e-6)
    s = privacy_summary(st)
    assert s.paper == "Paper's guarantee: (ρ=0.1, δ=1e-06)-zCDP"
    assert f"{st.row.eps:.3g}" in s.row_level and "tight" in s.row_level
    assert s.epsilon == f"ε = {st.row.eps:.3g}"
    assert f"{math.exp(st.row.eps):.3g}" in s.odds
    assert s.details == st.lines

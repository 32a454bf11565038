"""Accuracy vs ρ: median + quantile band on a hand-made frame."""

import numpy as np
import pandas as pd
import pytest

from dpviz.sweeps import summarize
from dpviz.viz.sweeps import (
    CURRENT_RULE,
    NONPRIVATE_RULE,
    accuracy_figure,
    clicked_budget,
    loss_vs_n_figure,
    success_figure,
)

RHOS = [0.01, 0.1, 1.0]


def _frame(seed=0, reps=21):
    rng = np.random.default_rng(seed)
    rows = []
    for alg in ("friendlycore", "dp_lloyd"):
        for rho in RHOS:
            for rep in range(reps):
                rows.append(dict(algorithm=alg, rho=rho, rep=rep, loss=rng.uniform(0, 1 / (1 + rho)),
                                 success=rep % 3 != 0 or rho > 0.5, center_error=rng.uniform(),
                                 seconds=0.01, n=1000))
    for rep in range(reps):
        rows.append(dict(algorithm="kmeans++", rho=np.inf, rep=rep, loss=0.01 * rep,
                         success=True, center_error=0.0, seconds=0.1, n=1000))
    return pd.DataFrame(rows)


def test_band_uses_the_requested_quantiles():
    df = _frame()
    fig = accuracy_figure(df, current_rho=0.3)
    by_name = {t.name: t for t in fig.data}
    med = by_name["FriendlyCore (practical split)"]
    upper = by_name["FriendlyCore (practical split) upper"]
    lower = by_name["FriendlyCore (practical split) lower"]
    assert lower.fill == "tonexty"
    for i, rho in enumerate(RHOS):
        v = df[(df.algorithm == "friendlycore") & (df.rho == rho)]["loss"].to_numpy()
        assert med.y[i] == pytest.approx(np.median(v))
        assert lower.y[i] == pytest.approx(np.quantile(v, 0.1))
        assert upper.y[i] == pytest.approx(np.quantile(v, 0.9))
        assert med.customdata[i][0] == rho  # clicking loads this ρ
    fig2 = accuracy_figure(df, quantiles=(0.25, 0.75))
    lower2 = {t.name: t for t in fig2.data}["DP-Lloyd lower"]
    v = df[(df.algorithm == "dp_lloyd") & (df.rho == 0.1)]["loss"].to_numpy()
    assert lower2.y[1] == pytest.approx(np.quantile(v, 0.25))


def test_nonprivate_line_and_current_rule():
    df = _frame()
    fig = accuracy_figure(df, current_rho=0.3)
    by_name = {t.name: t for t in fig.data}
    np_line = by_name[NONPRIVATE_RULE]
    assert list(np_line.y) == [pytest.approx(0.1)] * 2  # median of 0.00, 0.01, ..., 0.20
    assert list(np_line.x) == [0.01, 1.0]
    rule = by_name[f"{CURRENT_RULE} ρ = 0.3"]
    assert list(rule.x) == [0.3, 0.3]
    assert fig.layout.xaxis.type == "log"


def test_summary_columns_and_success_rate():
    s = summarize(_frame())
    # the one summarize (dpviz.sweeps): the ρ axis is read from the frame
    assert list(s.columns) == ["algorithm", "rho", "median", "q10", "q90", "success_rate",
                               "released_share", "structure_share", "seconds", "runs"]
    row = s[(s.algorithm == "dp_lloyd") & (s.rho == 0.01)].iloc[0]
    assert row.success_rate == pytest.approx(14 / 21) and row.runs == 21
    with pytest.raises(ValueError, match="quantiles"):
        summarize(_frame(), quantiles=(0.9, 0.1))


def test_success_and_loss_vs_n_figures():
    df = _frame()
    fig = success_figure(df, current_rho=0.1)
    fc = {t.name: t for t in fig.data}["FriendlyCore (practical split) alone (no centers = loss 1)"]
    assert list(fc.y) == [pytest.approx(14 / 21), pytest.approx(14 / 21), 1.0]
    df2 = pd.concat([df, df.assign(n=10_000, loss=df.loss / 2)], ignore_index=True)
    fig_n = loss_vs_n_figure(df2)
    med = {t.name: t for t in fig_n.data}["DP-Lloyd"]
    assert list(med.x) == [1000, 10_000]
    assert med.y[1] == pytest.approx(med.y[0] / 2)


def test_clicked_budget():
    assert clicked_budget({"customdata": [0.1, 0.2, 0.3]}) == 0.1
    assert clicked_budget({"x": 3}) is None
    assert clicked_budget({"customdata": [float("inf")]}) is None


def test_empty_and_reference_only_sweeps_still_draw():
    from dpviz.sweeps import Sweep, columns

    empty = Sweep(pd.DataFrame(columns=list(columns("rho"))))  # a sweep stopped before any run
    assert len(accuracy_figure(empty).data) == 0
    assert len(success_figure(empty).data) == 0
    assert len(loss_vs_n_figure(empty).data) == 0
    only = _frame()
    only = only[only.algorithm == "kmeans++"]
    names = [t.name for t in accuracy_figure(only, current_rho=1.0).data]
    assert names == [NONPRIVATE_RULE, f"{CURRENT_RULE} ρ = 1"]


def test_friendlycore_alone_and_with_fallback_are_separate_lines():
    """Issue 16: the Budget page plotted the fallback's results under the label "FriendlyCore"."""
    df = _frame()
    fc = df.algorithm == "friendlycore"
    # the fallback answered in the runs FriendlyCore did not succeed in (a grid summary's loss 0.05)
    df["fallback"] = fc & ~df.success
    df.loc[df.fallback, "loss"] = 0.05
    by_name = {t.name: t for t in accuracy_figure(df).data}
    alone = by_name["FriendlyCore (practical split) alone (no centers = loss 1)"]
    with_fb = by_name["FriendlyCore (practical split) with fallback"]
    assert "FriendlyCore (practical split)" not in by_name and "DP-Lloyd" in by_name
    for i, rho in enumerate(RHOS):
        runs = df[fc & (df.rho == rho)]
        assert with_fb.y[i] == pytest.approx(np.median(runs.loss))
        assert alone.y[i] == pytest.approx(np.median(np.where(runs.fallback, 1.0, runs.loss)))
    assert alone.y[0] > with_fb.y[0]  # a third of the runs fell back at ρ = 0.01: alone is worse
    assert alone.y[2] == with_fb.y[2]  # none fell back at ρ = 1
    assert alone.line.color != with_fb.line.color


def test_an_epsilon_axis_says_epsilon_in_hover_axis_and_title():
    """Issue 27: Budget's hover said ρ on a row-level ε axis."""
    df = _frame().rename(columns={"rho": "epsilon"})
    fig = accuracy_figure(df)
    med = {t.name: t for t in fig.data}["DP-Lloyd"]
    assert "ε = " in med.hovertemplate and "ρ" not in med.hovertemplate
    assert "ε" in fig.layout.xaxis.title.text and "ρ" not in fig.layout.xaxis.title.text
    assert "ρ" not in fig.layout.title.text
    succ = success_figure(df)
    assert all("ρ" not in (t.hovertemplate or "") for t in succ.data)
    n_fig = loss_vs_n_figure(df[df.epsilon == 0.1].assign(n=[500] * int((df.epsilon == 0.1).sum())))
    assert "ε = 0.1" in n_fig.layout.title.text

"""Easy Instances' Explore view "γ: pass rate and noise": what the ball scale γ does (note §8).

γ sets the test's balls B(y_i, γλ_i) (r_i = γ·min_{j≠i}‖y_i − y_j‖, [D]). Larger balls let more
tuples be partitioned, so the private test passes more often; but PrivatekNoisyCenters' noise
grows with γ: σ_i ∝ (2γ/(1−2γ))·κ·λ̂_i with κ = exp(b·ln(k/(2δ_E))), b = k·ln((1+2γ)/(1−2γ))/ε_λ,
which explodes past γ ≈ 10⁻² (note §4.5 table). The view simulates the configured algorithm over
a grid of γ in the parameter's own hint range and a few seeds (common random numbers: seed j
draws the same noise at every γ), and plots

* the share of runs that are not ⊥ (the private test passed and a tuple was chosen), and the
  share of the sampled tuples Y with ℓ̂_Y ≤ τ₁ (q/m: internal, a non-private diagnostic);
* the noise scale σ_i of the aggregated centers as *recorded* in each run's trace (step
  ``noisy_centers`` or ``averages``; nothing is recomputed), with κ from the public plan and the
  released ratio σ_i/λ̂_i (λ̂_i = e^{η_i}, step ``log_lambda``).

Every number is a seeded simulation, never a release. References: Cohen et al. 2021, §4.1, §4.4;
note §4.5, §8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpviz.clustering.easy_instances.applications import DEFAULT_GAMMA
from dpviz.registry import param_fields
from dpviz.result import Result
from dpviz.viz import colors
from dpviz.viz.storyboards import ExplorationContext, register_exploration

TITLE = "γ: pass rate and noise"
HELP = ("Simulation: the configured algorithm rerun at each γ of a grid over the γ slider's range, "
        "on the same data and seeds (seed, seed+1, …). Larger balls pass the private test more "
        "often, but NoisyCenters' noise grows with γ. Not a release.")

#: Seeds per γ (common random numbers across γ) [OURS].
N_SEEDS = 5

#: PrivatekAverages needs γ < 1/6 (Prop 3.1a) [D].
AVERAGES_GAMMA_MAX = 1.0 / 6.0


def _gamma_hint(params_cls: type) -> Any:
    for f, h in param_fields(params_cls):
        if f.name == "gamma":
            return h
    raise ValueError(f"{params_cls.__name__} has no 'gamma' parameter")


def gamma_grid(params_cls: type, aggregator: str) -> np.ndarray:
    """A 1-2-5 grid over the γ hint's range: from its step (the smallest settable γ > 0) to its
    high end (below 1/6 for PrivatekAverages), both ends included."""
    h = _gamma_hint(params_cls)
    lo = float(h.step or 1e-4)
    hi = float(h.high)
    if aggregator == "averages":
        hi = min(hi, math.floor((AVERAGES_GAMMA_MAX - 1e-12) / lo) * lo)
    vals = [m * 10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
            for m in (1.0, 2.0, 5.0)]
    grid = sorted({round(v, 12) for v in vals if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)} | {lo, hi})
    return np.array(grid)


def effective_gamma(params: Any, result: Any = None) -> float:
    """The γ the run used: the parameter, or when it is 0 ("automatic") the value the run recorded
    (``result.params["gamma"]``, chosen from public inputs), else the aggregator's default."""
    if params.gamma:
        return float(params.gamma)
    used = None if result is None else (result.params or {}).get("gamma")
    return float(used if used else DEFAULT_GAMMA[params.aggregator])


@dataclass
class GammaCell:
    """What the runs at one γ recorded (read from each Result's trace)."""

    gamma: float
    runs: int = 0
    feasible: int = 0
    passed: int = 0
    q_share: list[float] = field(default_factory=list)  # q/m per run that ran the test (internal)
    sigma: list[float] = field(default_factory=list)  # σ_i of the aggregated centers, passing runs
    ratio: list[float] = field(default_factory=list)  # σ_i/λ̂_i (released values), NoisyCenters
    kappa: float | None = None  # public, from the plan
    failures: list[str] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        """Share of the feasible runs that were not ⊥ (NaN when no run was feasible)."""
        return self.passed / self.feasible if self.feasible else math.nan


def _data(result: Result, name: str) -> dict[str, Any]:
    step = result.find(name)
    return {} if step is None else dict(step.data)


def read_cell(cell: GammaCell, result: Result) -> None:
    """Add one run's recorded outcome to ``cell`` (reads the trace; recomputes nothing)."""
    plan = _data(result, "plan")
    cell.runs += 1
    if plan.get("kappa") is not None:
        cell.kappa = float(plan["kappa"])
    if not plan.get("feasible", True):
        cell.failures.append(result.failure or "")
        return
    cell.feasible += 1
    test = _data(result, "test")
    if test.get("q") is not None and plan.get("test_m"):
        cell.q_share.append(test["q"] / plan["test_m"])
    if result.failure is not None:
        cell.failures.append(result.failure)
        return
    cell.passed += 1
    noisy = _data(result, "noisy_centers")
    if noisy.get("sigma") is not None:
        sig = np.asarray(noisy["sigma"], dtype=float)
        cell.sigma.extend(sig.tolist())
        eta = _data(result, "log_lambda").get("eta")
        if eta is not None:
            cell.ratio.extend((sig / np.exp(np.asarray(eta, dtype=float))).tolist())
        return
    avg = _data(result, "averages")
    if avg.get("sigma") is not None:
        cell.sigma.extend(np.asarray(avg["sigma"], dtype=float).reshape(-1).tolist())


def simulate_cells(ctx: ExplorationContext, grid: np.ndarray, n_seeds: int = N_SEEDS) -> list[GammaCell]:
    """Run the configured algorithm at every γ of ``grid`` and seeds ctx.seed … ctx.seed+n−1."""
    current = effective_gamma(ctx.params, ctx.result)
    cells = [GammaCell(float(g)) for g in grid]
    # seeds outer, γ inner: γ does not feed the tuple stage, so each seed's stage is built once and
    # reused across the whole grid even by a small stage cache (the app keeps 3)
    for j in range(n_seeds):
        for cell in cells:
            # the current γ is passed as configured (0 = auto): the cache returns the run on screen
            g = cell.gamma
            value = ctx.params.gamma if math.isclose(g, current, rel_tol=1e-12) else g
            try:
                run = ctx.simulate(seed=ctx.seed + j, gamma=value)
            except ValueError as exc:  # refused from public inputs before any data was read
                cell.runs += 1
                cell.failures.append(str(exc))
                continue
            read_cell(cell, run)
    return cells


def _median_band(values: list[list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    med = np.array([np.median(v) if v else np.nan for v in values])
    lo = np.array([np.min(v) if v else np.nan for v in values])
    hi = np.array([np.max(v) if v else np.nan for v in values])
    return med, med - lo, hi - med


def gamma_figure(cells: list[GammaCell], *, current: float, n_seeds: int, algorithm: str,
                 aggregator: str) -> go.Figure:
    """Pass rate (top) and recorded noise scales (bottom) against γ, the current γ marked."""
    g = np.array([c.gamma for c in cells])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        specs=[[{}], [{"secondary_y": True}]],
                        subplot_titles=("share of runs not ⊥ (the private test passed)",
                                        "noise σ_i of the k-tuple aggregator's centers (ĉ_i or â_i), "
                                        "as recorded in each run"))
    rate = np.array([c.pass_rate for c in cells])
    fig.add_trace(go.Scatter(x=g, y=rate, mode="lines+markers", name="pass rate (not ⊥), simulated",
                             text=[f"{c.passed}/{c.feasible}" for c in cells], textposition="top center",
                             line=dict(color=colors.PRIVATE), legendgroup="rate"), row=1, col=1)
    q = np.array([np.mean(c.q_share) if c.q_share else np.nan for c in cells])
    fig.add_trace(go.Scatter(x=g, y=q, mode="lines+markers", line=dict(color=colors.NONPRIVATE, dash="dot"),
                             name="share of Y ∈ Q with ℓ̂_Y ≤ τ₁ (q/m) — non-private diagnostic"),
                  row=1, col=1)
    infeasible = [c for c in cells if c.feasible == 0]
    if infeasible:
        fig.add_trace(go.Scatter(
            x=[c.gamma for c in infeasible], y=np.zeros(len(infeasible)), mode="markers",
            marker=dict(symbol="x", size=10, color=colors.REMOVED),
            name="infeasible (public inputs): ⊥ before any data is read",
            hovertext=[c.failures[0] if c.failures else "" for c in infeasible]), row=1, col=1)
    med, lo, hi = _median_band([c.sigma for c in cells])
    fig.add_trace(go.Scatter(x=g, y=med, mode="lines+markers", line=dict(color=colors.PRIVATE),
                             error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo),
                             name="σ_i recorded (median, min–max over passing runs)"), row=2, col=1)
    if aggregator == "noisy_centers":
        r_med, r_lo, r_hi = _median_band([c.ratio for c in cells])
        fig.add_trace(go.Scatter(x=g, y=r_med, mode="lines+markers",
                                 line=dict(color=colors.FINAL, dash="dash"),
                                 error_y=dict(type="data", symmetric=False, array=r_hi, arrayminus=r_lo),
                                 name="σ_i / λ̂_i (released values; right axis)"),
                      row=2, col=1, secondary_y=True)
        kappa = np.array([c.kappa if c.kappa is not None and math.isfinite(c.kappa) else np.nan
                          for c in cells])
        fig.add_trace(go.Scatter(x=g, y=kappa, mode="lines+markers",
                                 line=dict(color=colors.THRESHOLD, dash="dot"),
                                 name="κ from the public plan (right axis)"), row=2, col=1, secondary_y=True)
    mark = dict(mode="lines", line=dict(color=colors.REFERENCE, width=2, dash="dash"), hoverinfo="skip",
                legendgroup="current")
    fig.add_trace(go.Scatter(x=[current, current], y=[0, 1.05], name=f"current γ = {current:g}", **mark),
                  row=1, col=1)
    drawn = [v for c in cells for v in c.sigma if v > 0 and math.isfinite(v)]
    if drawn:  # the same mark across the σ panel's range (a trace: shapes on log axes are ambiguous)
        fig.add_trace(go.Scatter(x=[current, current], y=[min(drawn), max(drawn)], showlegend=False,
                                 name=f"current γ = {current:g}", **mark), row=2, col=1)
    runs = sum(c.runs for c in cells)
    if not any(c.passed for c in cells):
        why = ("every γ is infeasible at these public inputs (t < n_min, or κ overflows)"
               if not any(c.feasible for c in cells) else
               "the t tuples never agree to within γ of their inter-center distances here")
        fig.add_annotation(text=f"No run passed at any γ: {why}. Nothing is released, so no σ is recorded.",
                           xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False,
                           font=dict(size=12, color=colors.REMOVED))
    fig.update_layout(
        title=dict(text=f"{algorithm}: γ vs pass rate and noise — SIMULATION, not a release<br>"
                        f"<sup>{len(cells)} γ values × {n_seeds} seeds = {runs} seeded runs on this data "
                        f"({aggregator}); σ and κ read from each run's trace</sup>"),
        template=colors.TEMPLATE, height=720, legend=dict(itemsizing="constant", font=dict(size=10)))
    fig.update_xaxes(type="log", title_text="γ (ball scale; log)", row=2, col=1)
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_yaxes(range=[-0.05, 1.1], title_text="share of runs", row=1, col=1)
    fig.update_yaxes(type="log", title_text="σ_i (data units)", row=2, col=1, secondary_y=False,
                     exponentformat="power")
    fig.update_yaxes(type="log", title_text="σ_i/λ̂_i, κ", row=2, col=1, secondary_y=True,
                     exponentformat="power")
    return fig


def gamma_exploration(ctx: ExplorationContext, n_seeds: int = N_SEEDS) -> go.Figure:
    """The registered builder: simulate the γ grid and draw it."""
    params = ctx.params
    grid = gamma_grid(type(params), params.aggregator)
    current = effective_gamma(params, ctx.result)
    grid = np.unique(np.append(grid, current))
    cells = simulate_cells(ctx, grid, n_seeds)
    name = ctx.result.algorithm or "Easy Instances"
    return gamma_figure(cells, current=current, n_seeds=n_seeds, algorithm=name, aggregator=params.aggregator)


for _name in ("easy_instances", "easy_instances_gmm"):
    register_exploration(_name, TITLE, gamma_exploration, help=HELP)

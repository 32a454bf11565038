"""Triage: will FriendlyCore's core form on this data at this budget, and what to change if not.

A verdict combines two kinds of input, kept apart in every field and sentence:

- **public** (from the declared inputs only: n, t, k, ρ, δ, r_min, Λ, the split preset): the rows
  per piece n/t and the expected margins of FriendlyCore's tests (:func:`presets.margins`, §4.4 of
  the engineer's note), i.e. whether the noise on the t friend counts is small enough in principle;
- **non-private diagnostic of the data** (for the data owner's eyes, never released, never fed
  into a run): the pieces' actual agreement. The same non-private tuple stage FriendlyCore runs
  (:func:`fc_tuple_stage`: the oracle's k centers on each of the t pieces) gives every tuple's
  friend count w_i under match_{1/7}; a tuple agrees with most others when w_i > t/2. At the
  budget's noise (zCDPFilter, §4.2: ẑ_i = w_i − t/2 + N(0, n̂/(8ρ₂)) kept iff ẑ_i ≥ threshold)
  the expected share of kept tuples is the mean of Φ((w_i − t/2 − threshold)/σ).

The core is predicted to form when at least :data:`KEEP_SHARE` of the tuples are expected to pass
the match core and the public margins of the dist core and FindDiam are ≥ 0. Suggestions (k, t,
ρ, or the minimal n) are tried on the same non-private diagnostic and say so.

References: Tsfadia et al. 2022, §4.2 (zCDPFilter), §5.2 (FC_kTupleClustering, FC_Clustering);
the engineer's note §4.4 (feasibility margins).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtr

from dpviz._validation import check_rng, check_scalar
from dpviz.averaging.diameter import find_diam_calls
from dpviz.clustering.friendlycore import budget as presets
from dpviz.clustering.friendlycore.pipeline import fc_tuple_stage
from dpviz.clustering.friendlycore.steps import DIAM_BASE
from dpviz.clustering.tuples import TupleStage, stage_match_graph
from dpviz.core.filters import ZCDP_FILTER_N_FRACTION, expected_margin, zcdp_threshold

#: The core is predicted to form when at least this share of the t tuples is expected to pass
#: the match core (half: the dist core then sees a core that mostly agrees).
KEEP_SHARE = 0.5
#: A setting "agrees" (for a suggestion) when this share of the tuples has w_i > t/2.
AGREE_SHARE = 0.8
#: The ρ values a ρ suggestion is picked from (the Explore slider's grid: 10 per decade, 10⁻³…10).
RHO_GRID: tuple[float, ...] = tuple(float(f"{10 ** (i / 10):.3g}") for i in range(-30, 11))
#: Smallest rows per piece tried when looking for a smaller t (pieces must hold ≥ 2 rows per center).
MIN_ROWS_PER_CENTER = 2

StageFn = Callable[[int, int], TupleStage]


@dataclass(frozen=True)
class Suggestion:
    """One change to try: ``changes`` are app/run parameters (``k``, ``t``, ``rho``); empty for
    advice that no knob can apply (more rows). ``text`` is in the user's terms; ``source`` says
    whether it rests on the non-private diagnostic ("data") or on public inputs only ("public")."""

    kind: str  # "k" | "t" | "rho" | "n"
    text: str
    changes: dict[str, Any] = field(default_factory=dict)
    source: str = "data"


@dataclass(frozen=True)
class Verdict:
    """What :func:`triage` found. ``public_*`` fields come from declared inputs only; ``agreement``
    and ``expected_kept`` are non-private diagnostics of the data (never released)."""

    n: int
    k: int
    t: int
    rho: float
    delta: float
    rows_per_piece: int
    public_margins: dict[str, float]
    agreement: float
    expected_kept: float
    success: bool
    reason: str  # "ok" | "disagree" | "budget" | "too_small"
    headline: str
    public_line: str
    data_line: str
    suggestions: tuple[Suggestion, ...] = ()


@dataclass(frozen=True)
class _Check:
    """One (k, t, ρ) evaluated: public margins, agreement and expected kept share."""

    k: int
    t: int
    rho: float
    margins: dict[str, float]
    agreement: float
    expected_kept: float
    core_margins: dict[str, float]  # dist core and FindDiam at the expected core size (data)

    @property
    def ok(self) -> bool:
        return self.expected_kept >= KEEP_SHARE and min(self.core_margins.values()) >= 0


def expected_kept_share(counts: np.ndarray, *, rho: float, delta: float) -> float:
    """Mean over tuples of P(kept by zCDPFilter) at its expected n̂ (a non-private diagnostic).

    With n = len(counts), ρ₁ = 0.1ρ, ρ₂ = 0.9ρ, E[n̂] = n + √(ln(2/δ)/ρ₁), σ = √(n̂/(8ρ₂)):
    P(kept) = Φ((w_i − n/2 − threshold(n̂, ρ₂, δ))/σ) (Tsfadia et al. 2022, §4.2).
    """
    w = np.asarray(counts, dtype=np.float64)
    n = w.shape[0]
    if n == 0:
        return 0.0
    rho1 = ZCDP_FILTER_N_FRACTION * rho
    rho2 = rho - rho1
    n_hat = max(n + math.sqrt(math.log(2.0 / delta) / rho1), 1.0)
    thr = zcdp_threshold(n_hat, rho2, delta)
    sd = math.sqrt(n_hat / (8.0 * rho2))
    z = (w - n / 2.0 - thr) / sd
    return float(np.mean(ndtr(z)))


class _Triage:
    """The evaluation context: public knobs, and the (cached) non-private tuple stages."""

    def __init__(self, X: np.ndarray, *, n: int, delta: float, radius: float, r_min: float,
                 preset: str, fallback: bool, stage_fn: StageFn) -> None:
        self.X, self.n, self.delta, self.radius, self.r_min = X, n, delta, radius, r_min
        self.preset, self.fallback, self.stage_fn = preset, fallback, stage_fn
        self._counts: dict[tuple[int, int], np.ndarray] = {}

    def counts(self, k: int, t: int) -> np.ndarray:
        if (k, t) not in self._counts:
            self._counts[(k, t)] = np.asarray(stage_match_graph(self.stage_fn(k, t)).counts)
        return self._counts[(k, t)]

    def split(self, k: int, t: int, rho: float) -> presets.FCSplit:
        return presets.resolve_split(self.preset, t=t, k=k, rho=rho, delta=self.delta,
                                     r_min=self.r_min, radius=self.radius, fallback=self.fallback)

    def margins(self, k: int, t: int, rho: float) -> dict[str, float]:
        return presets.margins(self.split(k, t, rho), t=t, k=k, rho=rho, delta=self.delta,
                               r_min=self.r_min, radius=self.radius, base=DIAM_BASE)

    def check(self, k: int, t: int, rho: float) -> _Check:
        """Public margins, then the data's friend counts through the match core's noise, then
        the dist core and FindDiam margins at the expected core size (instead of the public
        guess 0.9·t: a core of half the tuples leaves those tests less slack)."""
        split = self.split(k, t, rho)
        m = self.margins(k, t, rho)
        w = self.counts(k, t)
        kept = expected_kept_share(w, rho=rho * split.rho["match_core"],
                                   delta=self.delta * split.delta["match_core"])
        c = max(1.0, kept * t)
        q = max(1, find_diam_calls(self.r_min, 2.0 * self.radius, DIAM_BASE))
        core = {presets.MARGIN_DIST: expected_margin(c, rho * split.rho["dist_core"],
                                                     self.delta * split.delta["dist_core"]),
                presets.MARGIN_DIAM: presets.diam_margin(c, rho * split.rho["find_diam"] / k,
                                                         split.diam_beta, q)}
        return _Check(k, t, rho, m, float(np.mean(w > t / 2.0)), kept, core)

    def smallest_rho(self, k: int, t: int, grid: Sequence[float]) -> float | None:
        """The smallest grid ρ at which (k, t) is predicted to succeed (None if none)."""
        for rho in grid:
            if self.check(k, t, rho).ok:
                return float(rho)
        return None


def _fmt_rho(rho: float) -> str:
    return f"{rho:.3g}"


def _round_up(n: float) -> int:
    """n rounded up to two significant digits (an order of magnitude, not a promise)."""
    if n <= 100:
        return math.ceil(n)
    e = 10 ** (math.floor(math.log10(n)) - 1)
    return int(math.ceil(n / e) * e)


def triage(
    X: np.ndarray,
    *,
    k: int,
    t: int,
    rho: float,
    delta: float,
    radius: float,
    r_min: float,
    preset: str = "practical",
    fallback: bool = True,
    oracle: str = "kmeans++",
    rng: Any = 0,
    n_declared: int | None = None,
    stage_fn: StageFn | None = None,
    rho_grid: Sequence[float] = RHO_GRID,
    k_min: int = 2,
) -> Verdict:
    """A triage verdict for FriendlyCore on ``X`` at (k, t, ρ, δ), with suggestions.

    Parameters
    ----------
    X : (n, d) array
        The rows (read by the non-private diagnostic only).
    k, t, rho, delta, radius, r_min, preset, fallback, oracle :
        The run's knobs, as for ``fc_private_stage`` / ``fc_tuple_stage``.
    rng : seed for the tuple stage when ``stage_fn`` is not given (every (k, t) tried uses a
        fresh generator from it, so a verdict is reproducible).
    n_declared : int, optional
        The declared size (default: the number of rows, as the app's simulations declare it).
    stage_fn : callable (k, t) → TupleStage, optional
        Where tuple stages come from (the app passes its cached, seeded stage so the verdict's
        tuples are the very ones its run uses).
    rho_grid : ascending ρ values a ρ suggestion is picked from.

    Returns
    -------
    Verdict

    Privacy
    -------
    NOT private: ``agreement``, ``expected_kept``, ``success`` and every suggestion read the
    tuples' friend counts (the same non-private stage FriendlyCore computes internally). Show
    them to the data owner only, never release them, never feed them into a run silently (a
    suggestion is applied only when the user clicks it). ``rows_per_piece`` and
    ``public_margins`` use the declared n and public knobs only.
    """
    func = "triage"
    k = int(check_scalar(k, "k", func, low=1, integer=True))
    t = int(check_scalar(t, "t", func, low=2, integer=True))
    rho = check_scalar(rho, "rho", func, low=0.0, low_open=True)
    delta = check_scalar(delta, "delta", func, low=0.0, high=1.0, low_open=True, high_open=True)
    X = np.asarray(X, dtype=np.float64)
    n = int(X.shape[0] if n_declared is None else n_declared)
    if stage_fn is None:
        seed = rng

        def stage_fn(kk: int, tt: int) -> TupleStage:
            return fc_tuple_stage(X, kk, n_tuples=tt, radius=radius, oracle=oracle,
                                  rng=check_rng(seed, "algorithm:friendlycore")[0], n_declared=n)

    ctx = _Triage(X, n=n, delta=delta, radius=radius, r_min=r_min, preset=preset,
                  fallback=fallback, stage_fn=stage_fn)
    rows = n // t
    pieces = f"{t:,} pieces of {rows:,} rows"
    if rows < MIN_ROWS_PER_CENTER * k:
        m = ctx.margins(k, t, rho)
        t_fit = max(2, n // (5 * k))
        sug = [Suggestion("t", f"Use fewer, larger pieces: t = {t_fit} ({n // t_fit:,} rows a "
                               "piece).", {"t": t_fit}, "public")] if t_fit < t else []
        return Verdict(n, k, t, rho, delta, rows, m, 0.0, 0.0, False, "too_small",
                       f"Predicted: FriendlyCore's core does not form — {pieces} cannot each hold "
                       f"{k} clusters.", _public_line(m, rows, t), "",
                       tuple(sug) + tuple(_public_n(ctx, _Check(k, t, rho, m, 0.0, 0.0, {}))))
    now = ctx.check(k, t, rho)
    public_line = _public_line(now.margins, rows, t)
    data_line = (f"Non-private diagnostic of your data: {now.agreement:.0%} of the {t:,} pieces "
                 f"found the same {k} clusters as most other pieces; at ρ = {_fmt_rho(rho)} about "
                 f"{now.expected_kept:.0%} of them are expected to pass FriendlyCore's first test "
                 f"(it needs {KEEP_SHARE:.0%}).")
    if now.ok:
        reason = "ok"
        headline = (f"Predicted: FriendlyCore's core forms — {pieces} agree at k = {k} and "
                    f"ρ = {_fmt_rho(rho)} is enough.")
    elif now.agreement < AGREE_SHARE:
        reason = "disagree"
        headline = (f"Predicted: FriendlyCore's core does not form — {pieces} did not agree on "
                    f"{k} clusters (its backup method would answer).")
    else:
        reason = "budget"
        headline = (f"Predicted: FriendlyCore's core does not form at ρ = {_fmt_rho(rho)} — the "
                    f"{pieces} agree, but the noise at this budget hides it.")
    sugg: list[Suggestion] = []
    if reason != "ok":
        sugg += _suggest_k(ctx, now, rho_grid, k_min)
        sugg += _suggest_rho(ctx, now, rho_grid)
        sugg += _suggest_t_and_n(ctx, now, rho_grid)
        if not any(s.kind == "n" for s in sugg):
            sugg += _public_n(ctx, now)
    return Verdict(n, k, t, rho, delta, rows, now.margins, now.agreement, now.expected_kept,
                   now.ok, reason, headline, public_line, data_line, tuple(sugg))


def _public_line(m: dict[str, float], rows: int, t: int) -> str:
    mm = m[presets.MARGIN_MATCH]
    word = "enough" if mm >= 0 else "too small"
    return (f"From public inputs only: {rows:,} rows per piece (n / t); the budget is {word} for "
            f"{t:,} pieces in principle (match-test margin {mm:+.1f} noise sd; ≥ 0 needed).")


def _with_rho(ctx: _Triage, k: int, t: int, rho: float, grid: Sequence[float]) -> tuple[bool, float]:
    """(success at ρ, ρ to use): ρ itself, or the smallest larger grid ρ that succeeds."""
    if ctx.check(k, t, rho).ok:
        return True, rho
    need = ctx.smallest_rho(k, t, [g for g in grid if g > rho])
    return (need is not None), (need if need is not None else rho)


def _smaller_ts(ctx: _Triage, k: int, t: int, grid: Sequence[float]) -> list[int]:
    """t, t/2, t/4, … (fewer, larger pieces) down to 2, skipping a t whose public match-test
    margin is negative even at the largest ρ of the grid (no data is read to prune)."""
    out, tt = [], t
    while tt >= 2 and ctx.n // tt >= MIN_ROWS_PER_CENTER * k:
        if ctx.margins(k, tt, max(grid))[presets.MARGIN_MATCH] >= 0:
            out.append(tt)
        tt //= 2
    return out


def _first_success(ctx: _Triage, k: int, ts: Sequence[int], rho: float,
                   grid: Sequence[float]) -> tuple[int, float, float] | None:
    """The first t of ``ts`` at which the pieces agree at k and some ρ ≥ ``rho`` of the grid is
    predicted to succeed: (t, ρ, agreement), or None."""
    for tt in ts:
        c = ctx.check(k, tt, rho)
        if c.agreement < AGREE_SHARE:
            continue
        ok, r = _with_rho(ctx, k, tt, rho, grid)
        if ok:
            return tt, r, c.agreement
    return None


def _changes_text(now: _Check, k: int, t: int, rho: float) -> tuple[dict[str, Any], str]:
    changes: dict[str, Any] = {}
    parts = []
    if k != now.k:
        changes["k"] = k
        parts.append(f"k = {k}")
    if t != now.t:
        changes["t"] = t
        parts.append(f"t = {t}")
    if rho != now.rho:
        changes["rho"] = rho
        parts.append(f"ρ = {_fmt_rho(rho)}")
    return changes, ", ".join(parts)


#: Rule of thumb for the rows a piece needs per center (``presets.suggest_n_tuples``'s grid uses
#: pieces of ≥ 10·k rows).
ROWS_PER_CENTER_RULE = 10


def _public_n(ctx: _Triage, now: _Check) -> list[Suggestion]:
    """The rows needed: the smallest t whose match-test margin at this ρ is ≥ 0 (public), times
    the current piece size when its pieces agree (the data diagnostic), else the rule-of-thumb
    piece size 10·k (public)."""
    agree = now.agreement >= AGREE_SHARE
    rows = ctx.n // now.t if agree else ROWS_PER_CENTER_RULE * now.k
    for tt in (50, 75, 100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 5000):
        if ctx.margins(now.k, tt, now.rho)[presets.MARGIN_MATCH] >= 0:
            n_need = _round_up(tt * rows)
            if tt <= now.t:
                return []
            why = ("your pieces of that size agree" if agree else
                   f"pieces of about {rows:,} rows usually agree at k = {now.k} (rule of thumb)")
            return [Suggestion("n", f"To stay at ρ = {_fmt_rho(now.rho)}: FriendlyCore needs about "
                                    f"{tt:,} pieces there (public margin), and {why}: you need "
                                    f"about {n_need:,} rows.", {}, "data" if agree else "public")]
    return [Suggestion("n", f"At ρ = {_fmt_rho(now.rho)} no t up to 5,000 gives the match test a "
                            "positive margin (public inputs): raise ρ.", {}, "public")]


def _suggest_k(ctx: _Triage, now: _Check, grid: Sequence[float], k_min: int) -> list[Suggestion]:
    """The largest k' < k at which the pieces agree, with the t and ρ it needs, if any."""
    if now.agreement >= AGREE_SHARE:
        return []
    for kk in range(now.k - 1, k_min - 1, -1):
        found = _first_success(ctx, kk, _smaller_ts(ctx, kk, now.t, grid), now.rho, grid)
        if found is None:
            continue
        tt, rho, agree = found
        changes, what = _changes_text(now, kk, tt, rho)
        pieces = "" if tt == now.t else f" in {tt:,} pieces of {ctx.n // tt:,} rows"
        return [Suggestion("k", f"At k = {kk} the pieces agree{pieces} ({agree:.0%} of them): set "
                                f"{what}.", changes)]
    return []


def _suggest_rho(ctx: _Triage, now: _Check, grid: Sequence[float]) -> list[Suggestion]:
    if now.agreement < AGREE_SHARE:
        return []
    need = ctx.smallest_rho(now.k, now.t, [g for g in grid if g > now.rho])
    if need is None:
        return []
    return [Suggestion("rho", f"At ρ = {_fmt_rho(need)} the core is expected to form (same k "
                              f"and t): set ρ = {_fmt_rho(need)}.", {"rho": need})]


def _suggest_t_and_n(ctx: _Triage, now: _Check, grid: Sequence[float]) -> list[Suggestion]:
    """Fewer, larger pieces at the same k: a t suggestion if some ρ of the grid then succeeds,
    and the rows needed to keep t pieces that large."""
    if now.agreement >= AGREE_SHARE:
        return []
    out: list[Suggestion] = []
    ts = _smaller_ts(ctx, now.k, now.t, grid)
    found = _first_success(ctx, now.k, [tt for tt in ts if tt < now.t], now.rho, grid)
    if found is not None:
        tt, rho, agree = found
        changes, what = _changes_text(now, now.k, tt, rho)
        out.append(Suggestion("t", f"With t = {tt:,} pieces of {ctx.n // tt:,} rows they agree at "
                                   f"k = {now.k} ({agree:.0%} of them): set {what}.", changes))
    tt = now.t // 2
    while tt >= 1 and ctx.n // max(tt, 1) >= MIN_ROWS_PER_CENTER * now.k and tt >= 2:
        if ctx.check(now.k, tt, now.rho).agreement >= AGREE_SHARE:
            rows = ctx.n // tt
            out.append(Suggestion("n", f"To keep t = {now.t:,} pieces at k = {now.k}, each needs "
                                       f"about {rows:,} rows (they agree at that size): you need "
                                       f"about {_round_up(rows * now.t):,} rows.", {}))
            break
        tt //= 2
    return out


# ------------------------------------------------------------- the verdict about private clustering

#: Row-level ε values a verdict may SUGGEST (sound territory: at most 10).
SOUND_EPS: tuple[float, ...] = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: Beyond sound territory, looked at only to estimate the rows a sound ε would need (never suggested).
BEYOND_EPS: tuple[float, ...] = (20.0, 50.0, 100.0)
#: The largest ε a suggestion may carry without a red warning (issue 27).
MAX_SOUND_EPS = 10.0


@dataclass(frozen=True)
class ClusteringVerdict:
    """Whether private clustering will be useful here, for any registered method.

    Attributes
    ----------
    sentence : str
        The one-sentence answer (what the Data page shows).
    method : str
        The registered method ``auto`` runs at the suggested (or the target) ε.
    epsilon : float or None
        The smallest row-level ε (from :data:`SOUND_EPS`, ≤ 10) at which the median normalized
        loss is within ``max_loss``; None when no sound ε reaches it.
    delta : float
        The row-level δ of every statement (< 1/n: never δ ≥ 1/n).
    rows_needed : int or None
        When no sound ε reaches ``max_loss``: an estimate of the rows the data would need at
        ε = 10 (noise scales as 1/(nε), so n·ε* rows where ε* is the smallest ε that reached it).
    target_eps, target_loss : float
        The user's target ε and the median loss expected there.
    losses : dict
        ε → median normalized loss (non-private diagnostic: seeded runs on the rows).
    """

    sentence: str
    method: str
    epsilon: float | None
    delta: float
    rows_needed: int | None
    target_eps: float
    target_loss: float
    losses: dict[float, float]
    max_loss: float

    @property
    def sound(self) -> bool:
        """Every suggestion is in sound territory: ε ≤ 10 and δ < 1/n."""
        return self.epsilon is None or self.epsilon <= MAX_SOUND_EPS


def sound_delta(delta: float, n_declared: int) -> float:
    """δ for a statement about n rows: the given δ, lowered to 1/(10 n) when it is not < 1/n (a
    δ ≥ 1/n allows publishing a row outright)."""
    return float(min(delta, 0.1 / n_declared))


#: Rows up to which :func:`clustering_verdict` runs scikit-learn on one thread.
SINGLE_THREAD_MAX_N = 20_000


def clustering_verdict(
    X: np.ndarray, k: int, *, radius: float, n_declared: int, delta: float, target_eps: float,
    max_loss: float = 0.1, reps: int = 3, rng: int = 0,
) -> ClusteringVerdict:
    """Will private clustering be useful on these rows? One sentence from public inputs plus a
    labelled non-private diagnostic.

    For each row-level ε of :data:`SOUND_EPS` (and, only to estimate the rows needed, of
    :data:`BEYOND_EPS`), the best registered method for the public inputs — what
    ``dpviz.clustering.auto`` runs (:func:`dpviz.clustering.auto.choose`) — runs ``reps`` seeded
    times on the rows (``dpviz.sweeps.sweep``) and its median normalized k-means loss 1 − X/Y
    (Tsfadia et al. 2022, §6.2) is read. The verdict is the smallest ε whose median loss is within
    ``max_loss``; else the rows a sound ε would need; and the loss to expect at ``target_eps``.

    Privacy
    -------
    A NON-PRIVATE DIAGNOSTIC for the data owner (the losses are exact functions of the rows);
    the sentence says so. It suggests only sound budgets: ε ≤ 10 and δ < 1/n.
    """
    from dpviz.clustering.auto import choose
    from dpviz.registry import get
    from dpviz.sweeps import sweep

    func = "clustering_verdict"
    n_declared = check_scalar(n_declared, "n_declared", func, low=1, integer=True)
    target_eps = check_scalar(target_eps, "target_eps", func, low=0.0, low_open=True)
    d = int(np.shape(X)[1])
    dl = sound_delta(delta, n_declared)
    losses: dict[float, float] = {}
    # The non-private reference X of 1 − X/Y is the same for every ε (the same rows, k and seed):
    # computed by the first sweep and handed to the others. It was recomputed per ε, 97 % of
    # the Check's time (issue 43: 36 s on Iris, of which 33 s in 8 identical references).
    reference: list[float] = []

    def run(eps: float) -> float:
        if eps not in losses:
            sw = sweep(X, k, algorithms=["auto"], epsilons=[eps], delta=dl, radius=radius,
                       n_declared=n_declared, reps=reps, rng=rng,
                       reference_cost=reference[0] if reference else None)
            reference[:] = [float(sw.params["reference_cost"])]
            losses[eps] = float(sw.frame["loss"].median())
        return losses[eps]

    # The target itself (when sound) is one of the ε looked at: the verdict's ε and the loss it
    # quotes at the target then never disagree (a target between two grid points that already
    # meets max_loss is where usefulness starts, not the next grid point above it).
    sound = tuple(sorted({*SOUND_EPS, *([float(target_eps)] if target_eps <= MAX_SOUND_EPS else [])}))
    grid = [*sound, *BEYOND_EPS]
    ok = []
    # One BLAS/OpenMP thread on small tables: scikit-learn's k-means on a few hundred rows spent
    # more in its threads' synchronization than in arithmetic, worst on a loaded machine
    # (issue 43: Iris 6.2 s → 2.1 s at load 26 on 2 cores). Same numbers either way.
    from dpviz._threads import one_thread

    with one_thread() if np.shape(X)[0] <= SINGLE_THREAD_MAX_N else contextlib.nullcontext():
        for e in grid:  # ascending: stop at the first ε that reaches max_loss
            if run(e) <= max_loss:
                ok.append(e)
                break
        run(float(target_eps))
    sound_ok = [e for e in ok if e in sound]
    eps = sound_ok[0] if sound_ok else None
    rows = None
    at = eps if eps is not None else float(target_eps)
    method = get(choose(n_declared, d, k, at, dl).algorithm).title
    t_loss = losses[float(target_eps)]
    losses = dict(sorted(losses.items()))
    diag = f"(non-private diagnostic: median of {reps} seeded runs on your rows per ε)"
    if eps is not None:
        head = (f"Private clustering is useful here from row-level ε = {eps:g} (δ = {dl:.0e}): "
                f"{method}, the best registered method for these inputs, is expected within "
                f"{max_loss:g} normalized loss of the non-private answer")
    else:
        beyond = [e for e in ok if e > MAX_SOUND_EPS]
        if beyond:
            rows = math.ceil(n_declared * beyond[0] / MAX_SOUND_EPS)
            need = f"about {rows:,} rows (now {n_declared:,}) to get there at ε = 10"
        else:
            need = f"more than {int(n_declared * max(BEYOND_EPS) / MAX_SOUND_EPS):,} rows"
        head = (f"No budget in sound territory (ε ≤ 10, δ = {dl:.0e}) brings {method} within "
                f"{max_loss:g} normalized loss of the non-private answer on these rows: it would "
                f"need {need}")
    sentence = f"{head}; at your target ε = {float(target_eps):g} expect a loss of about {t_loss:.2f} {diag}."
    return ClusteringVerdict(sentence, method, eps, dl, rows, float(target_eps), t_loss, losses, max_loss)

"""The membership game of the Learn page (issue 36): you are the attacker.

Each round draws a small public dataset (two blobs in the unit disc) and a target row, "Alice",
at the disc's edge; a fair coin decides whether Alice's row is in the data; the private center is
released by ``dpviz.run`` (DP-Lloyd with k = 1 and one step: the data's noisy mean, a simulation
at the chosen row-level ε); you see the others' rows, Alice's row, where the center would be
without noise in either world, and the release, and guess in or out. After the rounds your hit rate
stands beside the best any attacker can do at that (ε, δ) (:func:`attacker_bound`).

Streams: one game key per session, drawn from OS entropy (``secrets``), never put in the URL;
round r derives three independent streams from it with distinct spawn keys: the data, the coin
and the algorithm's noise. So the coin is not derivable from the link (nor from the data), and
the noise cannot be replayed from a seed the user can see.

Add/remove of one row is exactly the privacy unit of the registry's guarantees (docs/acs.md,
``dp_lloyd``), so the bound applies to this game as stated.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import dpviz

#: The release: DP-Lloyd, k = 1, one noisy step (a noisy sum and count: the data's private mean).
#: With k = 2 from DP-Lloyd's random public start the partition, not Alice, moved the centers:
#: a reasonable attacker was right 59 % of the time at ε = 10, against 72 % with k = 1 (200
#: rounds each, in-sample best threshold on the distance to Alice).
ALGORITHM = "dp_lloyd"
ITERATIONS = 1
K = 1
#: Rows per blob (others), the blobs' centers and spread, Alice's row; the declared radius Λ.
PER_BLOB = 12
BLOBS = np.array([[-0.5, -0.15], [0.5, -0.15]])
SPREAD = 0.12
ALICE = np.array([0.5, 0.85])  # norm 0.986 ≤ Λ: DP-Lloyd keeps her row
RADIUS = 1.0
#: The declared dataset size (public, the same in both worlds, so it says nothing about Alice).
N_DECLARED = 2 * PER_BLOB + 1
DELTA = 1e-5
ROUNDS = 10
#: Spawn keys of a round's three streams.
DATA, COIN, NOISE = 0, 1, 2


def attacker_bound(eps: float, delta: float = 0.0) -> float:
    """The best accuracy of ANY membership test, at prior 1/2, against an (ε, δ)-DP release:
    (e^ε + δ) / (1 + e^ε).

    Every test's error rates satisfy TPR ≤ e^ε·FPR + δ and TNR ≤ e^ε·FNR + δ (the hypothesis-testing
    view of DP: Kairouz, Oh & Viswanath, ICML 2015, Thm 2.1; Wasserman & Zhou 2010). The accuracy
    (TPR + 1 − FPR)/2 is largest where both hold with equality: FPR = (1 − δ)/(1 + e^ε), which
    gives (e^ε + δ)/(1 + e^ε); e^ε/(1 + e^ε) for pure ε-DP, ½ at ε = 0.
    """
    if eps < 0 or not 0 <= delta <= 1:
        raise ValueError(f"need ε ≥ 0 and 0 ≤ δ ≤ 1, got ε = {eps}, δ = {delta}")
    return min(1.0, (math.exp(eps) + delta) / (1.0 + math.exp(eps)))


def new_game_key() -> int:
    """A fresh 128-bit game key from the OS (never derived from the URL or the app's seed)."""
    return secrets.randbits(128)


def _stream(game_key: int, round_index: int, which: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(game_key, spawn_key=(round_index, which)))


@dataclass(frozen=True)
class Round:
    """One round: what the attacker sees (``others``, ``alice``, ``centers``, ``eps``, ``delta``)
    and the hidden coin ``inside``."""

    others: np.ndarray
    alice: np.ndarray
    inside: bool
    centers: np.ndarray | None
    eps: float
    delta: float


def others_rows(rng: np.random.Generator) -> np.ndarray:
    """The other people's rows: two blobs, kept inside the declared disc of radius Λ."""
    X = np.repeat(BLOBS, PER_BLOB, axis=0) + rng.normal(scale=SPREAD, size=(2 * PER_BLOB, 2))
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X * np.minimum(1.0, 0.98 * RADIUS / norms)


def play_round(game_key: int, round_index: int, eps: float) -> Round:
    """Draw round ``round_index`` of the game ``game_key`` and release its centers at row-level ε."""
    others = others_rows(_stream(game_key, round_index, DATA))
    inside = bool(_stream(game_key, round_index, COIN).random() < 0.5)
    X = np.vstack([others, ALICE]) if inside else others
    result = dpviz.run(ALGORITHM, X, K, epsilon=float(eps), delta=DELTA, radius=RADIUS,
                       n_declared=N_DECLARED, rng=_stream(game_key, round_index, NOISE),
                       iters=ITERATIONS)
    g = result.guarantee
    centers = None if result.centers is None else np.asarray(result.centers, float)
    return Round(others=others, alice=ALICE.copy(), inside=inside, centers=centers,
                 eps=float(g.eps), delta=float(g.delta))


def noiseless_centers(others: np.ndarray, alice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the center would be without noise if Alice is out, and if she is in (the rows' mean:
    DP-Lloyd's k = 1 step). Public here: the game's attacker knows both neighbouring datasets."""
    return others.mean(axis=0), np.vstack([others, alice]).mean(axis=0)


def summary(r: Round, round_number: int) -> str:
    """The round's figure in one line (its text alternative)."""
    out_c, in_c = noiseless_centers(r.others, r.alice)
    at = "nowhere (the run failed)" if r.centers is None else \
        f"({r.centers[0][0]:.3f}, {r.centers[0][1]:.3f})"
    return (f"Round {round_number}: the private center is at {at}; without noise it would be at "
            f"({out_c[0]:.3f}, {out_c[1]:.3f}) if Alice is out and ({in_c[0]:.3f}, {in_c[1]:.3f}) "
            f"if she is in; Alice's row is at ({r.alice[0]:.2f}, {r.alice[1]:.2f})")


def round_figure(r: Round, round_number: int) -> go.Figure:
    """Round ``round_number``: (a) the others' rows and Alice's; (b) zoomed on the center, where
    it would be without noise in either world and the release."""
    out_c, in_c = noiseless_centers(r.others, r.alice)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "(a) the data: 24 other people and Alice", "(b) zoom: the released center"))
    grey, orange, blue, red = "#6b6b6b", "#B34700", "#0b4f9c", "#111111"
    fig.add_trace(go.Scatter(x=r.others[:, 0], y=r.others[:, 1], mode="markers", name="others' rows",
                             marker=dict(color=grey, size=7)), 1, 1)
    for col in (1, 2):
        fig.add_trace(go.Scatter(x=[out_c[0]], y=[out_c[1]], mode="markers",
                                 name="center if Alice is OUT (no noise)", showlegend=col == 1,
                                 marker=dict(symbol="circle-open", size=16, color=blue,
                                             line=dict(width=3))), 1, col)
        fig.add_trace(go.Scatter(x=[in_c[0]], y=[in_c[1]], mode="markers",
                                 name="center if Alice is IN (no noise)", showlegend=col == 1,
                                 marker=dict(symbol="diamond-open", size=16, color=orange,
                                             line=dict(width=3))), 1, col)
    fig.add_trace(go.Scatter(x=[r.alice[0]], y=[r.alice[1]], mode="markers", name="Alice's row",
                             marker=dict(symbol="star", size=18, color=orange)), 1, 1)
    mid = (out_c + in_c) / 2
    if r.centers is not None:
        c = r.centers[0]
        fig.add_trace(go.Scatter(x=[c[0]], y=[c[1]], mode="markers", name="the private release",
                                 marker=dict(symbol="x", size=18, color=red)), 1, 2)
        half = float(min(1.5, max(0.15, 1.25 * np.abs(c - mid).max())))
    else:
        half = 0.15
    fig.update_xaxes(range=[-1.05, 1.05], row=1, col=1)
    fig.update_yaxes(range=[-1.05, 1.05], scaleanchor="x", row=1, col=1)
    fig.update_xaxes(range=[mid[0] - half, mid[0] + half], row=1, col=2)
    fig.update_yaxes(range=[mid[1] - half, mid[1] + half], scaleanchor="x2", row=1, col=2)
    fig.update_layout(title_text=f"Round {round_number}: is Alice's row in the data?", height=400,
                      margin=dict(l=10, r=10, t=70, b=10),
                      legend=dict(orientation="h", y=-0.08))
    return fig


def hit_rate(guesses: list[bool], truths: list[bool]) -> float:
    """The share of guesses that matched the coin."""
    if not guesses or len(guesses) != len(truths):
        raise ValueError("need as many guesses as rounds, at least one")
    return float(np.mean(np.asarray(guesses) == np.asarray(truths)))


def chance_at_least(hits: int, rounds: int, p: float) -> float:
    """P[Binomial(rounds, p) ≥ hits]: how often an attacker right with probability ``p`` in each
    round (the bound's best attacker, p = :func:`attacker_bound`) gets ``hits`` or more of
    ``rounds`` right. The bound limits the expected hit rate; a short game can beat it by luck."""
    return float(sum(math.comb(rounds, j) * p**j * (1.0 - p) ** (rounds - j)
                     for j in range(max(hits, 0), rounds + 1)))


def verdict(hits: int, rounds: int, bound: float) -> str:
    """What a final hit rate says beside the bound, true for a rate above it too (issue 43)."""
    rate = hits / rounds
    if rate <= bound:
        return (f"{hits} of {rounds} right: within the bound. No attacker's expected hit rate can "
                f"exceed {bound:.1%} at this (ε, δ).")
    luck = chance_at_least(hits, rounds, bound)
    return (f"{hits} of {rounds} right: above the {bound:.1%} bound, by luck. The bound limits "
            f"the hit rate an attacker can expect, not one short game: even the best possible "
            f"attacker, right {bound:.1%} of the time, gets {hits} or more of {rounds} right with "
            f"probability {luck:.0%}. Over many rounds no attacker stays above it.")


"""``best_of``: several private candidates, scored privately, the best one released (issue 35).

A variance-reduction step around a row-level zCDP algorithm (the *base*). With the run's budget
ρ-zCDP (own δ) and the public share s (``select_share``):

1. **Candidates.** The base runs ``runs`` times on the rows and, with ``also`` (issue 44), a
   second registered algorithm once: m = runs (+ 1) private draws, each with ρ_b = (1 − s)·ρ/m
   and δ/m, on the run's one stream (independent draws). A candidate that answered ⊥ is dropped
   (its ⊥ is a private output). With ``origin`` the data-free answer (every center at 0) is one
   more candidate: it reads no row, so the step can shrink a bad draw to the origin. (Issue 44:
   on small tables ``rc_lloyd`` wins where clusters overlap and ``tree_coreset`` where they are
   well separated, and n, d, k, ε do not tell which; one draw of each lets the scores tell.)
2. **Scores.** The k-means cost of each candidate on the rows clipped to the Λ-ball, with the
   candidate's centers clipped to the ball too (post-processing; projecting onto a convex set
   containing the rows only shortens distances), each row's squared distance capped at the public
   τ = ``score_clip``·(2Λ)². Each row then adds a term in [0, τ], so every score has sensitivity
   Δ = τ under add/remove of one row. (With τ = (2Λ)² the cap never binds; on a standardized
   table whose rows sit well inside the ball it is 10²–10³ × the per-row cost, and the scores
   would drown: a smaller τ trades a bias on far rows for less noise. The default 1/16 was chosen
   on ``auto``'s calibration tables only, ``bench/auto_best_of.py``: 1/16 and 1/64 within 2% of
   each other on the median and p90, 1/256 2.9× worse on the median.)
3. **Selection.** The exponential mechanism (McSherry & Talwar 2007) on −cost with ε_s = √(8·s·ρ):
   index i with probability ∝ exp(−ε_s·cost_i/(2Δ)). It is ε_s-bounded-range, hence
   ε_s²/8 = s·ρ-zCDP (Cesar & Rogers 2021, Lemma 3.2), booked on the ledger as a zCDP spend of
   s·ρ (as ε_s-DP it would count ε_s²/2, four times more). Only the chosen candidate is released.

The whole is ρ-zCDP with own δ (sequential composition of the m draws and the selection, Bun &
Steinke 2016, Lemma 2.3; the δ/m parts add up to δ), stated from public inputs only. Bases are
those whose guarantee is exactly the zCDP conversion of their budget (``BASES``; a test checks it).
The draws that are not released stay internal: the trace keeps the chosen one's steps only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz._validation import check_rng, is_simulation
from dpviz.data.bounds import clip_to_ball
from dpviz.geometry import nearest_center
from dpviz.privacy.accounting import bounded_range_eps, pure_rho_guarantee
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import exponential_zcdp
from dpviz.registry import AlgorithmSpec, Public, check_hinted, get, hint, register
from dpviz.result import Result, Trace

#: Bases whose row-level guarantee is ``approx_zcdp_to_dp(ZCDP(ρ, 0), δ′)`` of their budget, so m
#: of them and the selection compose in zCDP (tests/unit/test_best_of.py checks each).
BASES = ("tree_coreset", "grid_coreset", "gauss_fit", "dp_lloyd", "rc_lloyd")


@dataclass(frozen=True)
class BestOfParams:
    """The base algorithm, how many draws of it, the selection's share, the origin candidate."""

    base: str = field(default="tree_coreset", metadata=hint(
        choices=BASES, label="base algorithm", help="the private algorithm whose draws are candidates"))
    runs: int = field(default=1, metadata=hint(low=1, high=8, step=1, label="draws",
                                               help="independent draws of the base, each with "
                                                    "(1 − share)·ρ / draws"))
    select_share: float = field(default=0.1, metadata=hint(
        low=0.01, high=0.5, step=0.01, label="selection share",
        help="share of ρ spent scoring the candidates (exponential mechanism on their k-means cost)"))
    also: str = field(default="none", metadata=hint(
        choices=("none", *BASES), label="second algorithm",
        help="one draw of this registered algorithm is a candidate too (its share of ρ as a base draw's)"))
    origin: bool = field(default=True, metadata=hint(
        help="the data-free answer (every center at the origin) is a candidate too"))
    score_clip: float = field(default=0.0625, metadata=hint(
        low=1e-4, high=1.0, scale="log", label="score clip",
        help="each row's squared distance in a score is capped at this fraction of (2Λ)², the "
             "score's sensitivity (public: smaller is less noise, more bias on far rows)"))

    def __post_init__(self) -> None:
        check_hinted(self, "best_of")


def selection_eps(rho: float, share: float) -> float:
    """ε of the exponential mechanism spending share·ρ of zCDP: ε-bounded range ⇒ ε²/8-zCDP
    (Cesar & Rogers 2021, Lemma 3.2; :func:`~dpviz.privacy.accounting.bounded_range_eps`)."""
    return bounded_range_eps(share * rho)


def score_sensitivity(radius: float, clip: float = 1.0) -> float:
    """Δ of a candidate's score: each row adds min(‖x − c‖², τ) with τ = clip·(2Λ)² ≤ (2Λ)²."""
    return clip * 4.0 * radius * radius


def clipped_cost(Xc: np.ndarray, centers: np.ndarray, radius: float, clip: float = 1.0) -> float:
    """Σ_i min(min_j ‖x_i − c_j‖², τ), τ = clip·(2Λ)², centers clipped to the Λ-ball (``Xc``
    already clipped): every term is in [0, τ]."""
    C = clip_to_ball(np.asarray(centers, dtype=np.float64), radius)
    if Xc.shape[0] == 0:
        return 0.0
    _, d2 = nearest_center(Xc, C)
    return float(np.sum(np.minimum(d2, score_sensitivity(radius, clip))))


def private_pick(X: np.ndarray, candidates: list[np.ndarray], *, radius: float, clip: float, eps: float,
                 rho: float, rng: np.random.Generator, ledger: Ledger) -> int:
    """The exponential mechanism's index among ``candidates`` (each a (k, d) array) on their capped
    cost (step 3 of the module docstring): P(i) ∝ exp(−ε·cost_i/(2Δ)), Δ = clip·(2Λ)². The
    mechanism books itself (:func:`~dpviz.privacy.mechanisms.exponential_zcdp`: ``rho`` = ε²/8
    zCDP on ``ledger`` as "selection"); ``eps`` is checked against it."""
    if abs(eps * eps / 8.0 - rho) > 1e-12 * max(rho, 1.0):
        raise ValueError(f"private_pick books ρ = ε²/8: got ε = {eps!r} and ρ = {rho!r}.")
    Xc = clip_to_ball(np.asarray(X, dtype=np.float64), radius)
    costs = np.array([clipped_cost(Xc, C, radius, clip) for C in candidates])
    sens = score_sensitivity(radius, clip)
    return exponential_zcdp(-costs, sensitivity=sens, rho=rho, rng=rng, ledger=ledger, name="selection",
                            note=f"exponential mechanism (ε = {eps:.4g}, bounded range: ε²/8-zCDP) over "
                                 f"{len(candidates)} candidate(s) on their capped k-means cost")


def best_of(X: np.ndarray, k: int, *, rho: float, delta: float, radius: float, pub: Public,
            params: BestOfParams, rng: np.random.Generator | int) -> Result:
    """m private candidates of the base, plus the origin, and the exponential mechanism's pick
    (module docstring). Spends exactly ρ (and δ) on the ledger."""
    rng, _ = check_rng(rng, "algorithm:best_of")
    spec = get(params.base)
    base_params = spec.make_params()
    draws = [(spec, base_params, f"{params.base} draw {j + 1}") for j in range(params.runs)]
    if params.also != "none":
        also = get(params.also)
        draws.append((also, also.make_params(), f"{params.also} draw"))
    m = len(draws)
    rho_b = (1.0 - params.select_share) * rho / m
    ledger = Ledger("best_of", ZCDP(rho, delta),
                    note=f"{params.runs} draw(s) of {params.base}"
                         + (f", one of {params.also}" if params.also != "none" else "")
                         + " and a private selection")
    names: list[str] = []
    candidates: list[np.ndarray] = []
    results: list[Result | None] = []
    for draw_spec, draw_params, name in draws:
        res = draw_spec.private(X, k, ZCDP(rho_b, delta / m), radius=radius, rng=rng, pub=pub,
                                params=draw_params, stage=None)
        ledger.children.append(res.ledger)
        if res.centers is not None:
            names.append(name)
            candidates.append(np.asarray(res.centers, dtype=np.float64))
            results.append(res)
    if params.origin:
        names.append("origin")
        candidates.append(np.zeros((k, pub.d)))
        results.append(None)
    trace = Trace()
    if not candidates:  # every draw answered ⊥ and the origin is not a candidate
        trace.add("best_of_choice", released=True, candidates=[], chosen=None, note="every draw was ⊥")
        return Result(None, "every candidate answered ⊥", ledger, trace.freeze(),
                      _params(params), simulation=is_simulation(rng))
    i = private_pick(X, candidates, radius=radius, clip=params.score_clip,
                     eps=selection_eps(rho, params.select_share), rho=params.select_share * rho,
                     rng=rng, ledger=ledger)
    chosen = results[i]
    if chosen is not None:
        trace.extend(chosen.trace)
    trace.add("best_of_choice", released=True, candidates=names, chosen=names[i],
              note="the exponential mechanism's pick; the candidates' costs are not released")
    return Result(clip_to_ball(candidates[i], radius), None, ledger, trace.freeze(), _params(params),
                  simulation=is_simulation(rng))


def _params(p: BestOfParams) -> dict[str, Any]:
    return {"algorithm": "best_of", "base": p.base, "runs": p.runs, "also": p.also,
            "select_share": p.select_share, "origin": p.origin, "score_clip": p.score_clip}


def _private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
             pub: Public, params: BestOfParams, stage: Any = None) -> Result:
    return best_of(X, k, rho=budget.rho, delta=budget.delta, radius=radius, pub=pub, params=params, rng=rng)


SPEC = register(AlgorithmSpec(
    name="best_of", title="Best of private candidates (exponential mechanism)", budget_kind="zcdp",
    params=BestOfParams,
    paper="McSherry & Talwar 2007 (the exponential mechanism) over draws of a registered algorithm; "
          "Bun & Steinke 2016 (zCDP composition)",
    # Pure ρ-zCDP: every base in BASES is pure ρ_b-zCDP (its own δ unused; the test
    # test_every_base_is_a_plain_zcdp_conversion checks each) and the selection is pure s·ρ-zCDP,
    # so the whole composes to pure ρ-zCDP and the budget's own δ is never spent. The old guarantee
    # ZCDP(ρ, δ) → (ε, δ + δ′) over-stated δ by the unspent own δ on a ρ axis (plan_at_budget);
    # the ledger's re-account states ZCDP(ρ, 0) → (ε, δ′), as this does now.
    private=_private, guarantee=pure_rho_guarantee, steps=("best_of_choice",), rank=70,
    description="Runs a registered algorithm one or more times on part of the budget, adds the "
                "data-free origin answer, and releases the candidate the exponential mechanism picks "
                "on their k-means cost: a bad draw can fall back to a better one.",
))

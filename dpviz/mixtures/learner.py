"""A runnable univariate private GMM learner in the pipeline of Ashtiani, Majid, Narayanan (NeurIPS 2024).

§2.2, App. D and F (Algorithm 3, Thm 1.5): a disjoint split; a crude stage (private histogram of
sorted gaps, Truncated Laplace, a threshold) that needs no bounds on the means or the scales; a fine
stage of private hypothesis selection over mixtures built around the crude candidates.

What is and is not the paper's algorithm
----------------------------------------
- Split, crude stage, threshold: the paper's structure; cell widths, τ and the noise calibration
  are our choices where the text is missing (see ``crude``).
- Fine stage: NOT the paper's. Lemma D.3 selects once over a net of size (L·poly(n)/α)^{O(k)}
  (infeasible). We run 1 + 4·``levels`` exponential mechanisms, each over a small finite set of
  mixtures with the same sensitivity-1 minimum-distance score: round 0 picks ≤ k candidate
  components built from the crude groups, then each level refines all scales, all means, all
  weights on a shrinking grid, and may swap one component for another candidate (a private local
  search). Basic composition, ε/(1 + 4·levels) each.
- Privacy is exact (ledger below). The accuracy guarantee is NOT the paper's: our nets are coarser
  than Lemma D.1 requires and the local search has no guarantee of reaching the best hypothesis.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

import numpy as np

from dpviz._validation import check_rng, check_scalar
from dpviz.mixtures.crude import CrudeGroup, crude_stage, group_candidates
from dpviz.mixtures.mixture import GaussianMixture1D
from dpviz.mixtures.selection import min_distance_scores
from dpviz.privacy.accounting import dp_total
from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import exponential
from dpviz.registry import check_hinted, hint
from dpviz.result import Result, Trace

_FUNC = "private_gmm_1d"


@dataclass(frozen=True)
class GMM1DParams:
    """Knobs of the univariate learner (all [O], our choices; see the field help)."""

    crude_fraction: float = field(default=0.5, metadata=hint(
        low=0.05, high=0.95, step=0.05, label="crude share",
        help="probability that a row goes to the crude part (else to the fine part)"))
    threshold_factor: float = field(default=2.0, metadata=hint(
        low=1.01, high=10.0, step=0.1, label="τ (T = τ·A)",
        help="threshold multiple of the noise bound A; > 1 so that an empty bucket can never pass"))
    levels: int = field(default=5, metadata=hint(
        low=0, high=8, step=1, label="refinement levels",
        help="each level is a scale, a mean, a weight and a swap round (1 + 4·levels selections)"))
    max_groups: int = field(default=6, metadata=hint(
        low=1, high=12, step=1, help="at most this many crude groups (largest noisy counts) enter round 0"))
    atoms_per_group: int = field(default=3, metadata=hint(
        low=1, high=5, step=1, help="candidate components per crude group: (μ̂, σ̂) and μ̂ ± 2σ̂, ± 4σ̂, …"))
    alpha: float = field(default=0.1, metadata=hint(
        low=0.0, high=0.5, step=0.01, label="α",
        help="drop crude groups whose share of the noisy counts is below α/k (light components)"))
    score_sets: str = field(default="intervals", metadata=hint(
        choices=("intervals", "cells"),
        help="min-distance sets: unions of ≤ 2k intervals (Yatracos class) or every union of cells"))

    def __post_init__(self) -> None:
        check_hinted(self, "private_gmm_1d")

    @property
    def n_rounds(self) -> int:
        """Exponential mechanisms in the fine stage."""
        return 1 + 4 * self.levels


def _as_1d(X: object) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"The 'X' parameter of {_FUNC} must be 1-D data of shape (n,) or (n, 1). "
                         f"Got shape {arr.shape} instead.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"The 'X' parameter of {_FUNC} contains NaN or infinite values.")
    return arr


def _pad(rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, ...]:
    m = max(r[0].size for r in rows)
    w = np.zeros((len(rows), m))
    mu = np.zeros((len(rows), m))
    sd = np.ones((len(rows), m))
    for i, (a, b, c) in enumerate(rows):
        w[i, : a.size], mu[i, : a.size], sd[i, : a.size] = a, b, c
    return w, mu, sd


def _atoms(groups: list[CrudeGroup], per_group: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate components [O]: each group at its estimate (μ̂, σ̂), plus ``per_group − 1`` more at
    μ̂ ± 2σ̂, ± 4σ̂, … with scale σ̂/2 (one group's cells can hold several components closer than σ/w),
    each with a share of the group's n̂."""
    mu, sd, n_hat = [], [], []
    offsets = [2.0 * (j // 2 + 1) * (-1) ** j for j in range(per_group - 1)]
    for g in groups:
        mu += [g.mean] + [g.mean + o * g.sd for o in offsets]
        sd += [g.sd] + [g.sd / 2.0] * len(offsets)
        n_hat += [g.n_hat] + [g.n_hat / per_group] * len(offsets)
    return np.array(mu), np.array(sd), np.array(n_hat)


def _round0_hypotheses(
    atoms: tuple[np.ndarray, ...], k: int
) -> tuple[list[tuple[int, ...]], tuple[np.ndarray, ...]]:
    """Every set of ≤ k atoms (see ``_atoms``), weights ∝ their n̂."""
    mu, sd, n_hat = atoms
    subsets = [s for m in range(1, min(k, mu.size) + 1) for s in itertools.combinations(range(mu.size), m)]
    rows = [(n_hat[list(s)] / n_hat[list(s)].sum(), mu[list(s)], sd[list(s)]) for s in subsets]
    return subsets, _pad(rows)


def _moves(m: int) -> np.ndarray:
    """(h, m) grid of per-component step multipliers: {0, ±1/9, ±⅓, ±1} for m ≤ 3 components
    (coarse and fine moves at every level: 7^m ≤ 343 hypotheses), {0, ±¼, ±1} for m = 4, else
    {0, ±1}."""
    if m <= 3:
        opts: tuple[float, ...] = (-1.0, -1.0 / 3.0, -1.0 / 9.0, 0.0, 1.0 / 9.0, 1.0 / 3.0, 1.0)
    elif m == 4:
        opts = (-1.0, -0.25, 0.0, 0.25, 1.0)
    else:
        opts = (-1.0, 0.0, 1.0)
    return np.array(list(itertools.product(opts, repeat=m)), dtype=np.float64)


def _swap_hypotheses(mix: GaussianMixture1D, atoms: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The current mixture and every mixture with one component replaced by a candidate atom (its
    weight kept): lets the search leave a wrong choice of round 0."""
    mu_a, sd_a, _ = atoms
    m, a = mix.k, mu_a.size
    w = np.tile(mix.weights, (1 + m * a, 1))
    mu = np.tile(mix.means, (1 + m * a, 1))
    sd = np.tile(mix.sds, (1 + m * a, 1))
    rows = 1 + np.arange(m * a)
    comp, atom = np.divmod(np.arange(m * a), a)
    mu[rows, comp] = mu_a[atom]
    sd[rows, comp] = sd_a[atom]
    return w, mu, sd


def _refine_hypotheses(mix: GaussianMixture1D, kind: str, level: int) -> tuple[np.ndarray, ...]:
    """Round ``kind`` ∈ {scale, mean, weight} of level ℓ: every component moves at once, by j·step
    with j from ``_moves``.

    Scales multiply by (2^{2^{2−ℓ}})^j (level 0 reaches ×16: crude scales are off by large factors);
    means shift by j·(6·2^{−ℓ})·σ; weights multiply by (1 + 2^{−ℓ})^j and are renormalized.
    """
    steps = _moves(mix.k)
    h = steps.shape[0]
    w = np.tile(mix.weights, (h, 1))
    mu = np.tile(mix.means, (h, 1))
    sd = np.tile(mix.sds, (h, 1))
    shrink = 2.0**-level
    if kind == "mean":
        mu = mu + steps * (6.0 * shrink) * sd
    elif kind == "scale":
        sd = sd * 2.0 ** (steps * 4.0 * shrink)
    else:
        w = w * (1.0 + shrink) ** steps
        w = w / w.sum(axis=1, keepdims=True)
        _, keep = np.unique(np.round(w, 12), axis=0, return_index=True)
        keep = np.sort(keep)
        w, mu, sd = w[keep], mu[keep], sd[keep]
    return w, mu, sd


def private_gmm_1d(
    X: object,
    k: int,
    *,
    epsilon: float,
    delta: float,
    n_declared: int,
    rng: np.random.Generator | int | None = None,
    params: GMM1DParams | None = None,
) -> Result:
    """Learn a mixture of ≤ k Gaussians on ℝ under (ε, δ)-DP, with no bounds on means or scales.

    Parameters
    ----------
    X : (n,) or (n, 1) array
    k : int, the number of components (public).
    epsilon, delta : the (ε, δ)-DP budget for one row.
    n_declared : int, the declared (public) dataset size. It sets the location cells 2^b·n_declared;
        the true n is never used to shape a release.
    rng : Generator, int or None.
    params : GMM1DParams.

    Returns
    -------
    Result
        ``centers`` are the selected means as (m, 1) (m ≤ k) or None on ⊥; ``params["mixture"]`` is
        the selected mixture (weights, means, sds); the trace has the gap histogram, the crude
        candidates, the groups, every selection round and the mixture.

    Privacy
    -------
    (ε, δ)-DP for adding or removing one row. Each row goes to the crude part with probability
    ``crude_fraction``, independently of the data, so one row touches one part: the crude stage is
    (ε, δ)-DP on its part, the fine stage ε-DP on the other (1 + 4·levels exponential mechanisms of
    ε/(1 + 4·levels), sensitivity 1), and parallel composition gives (ε, δ). A run that outputs ⊥
    records the fine stage's ε as reserved: every branch records the same totals.

    References
    ----------
    Ashtiani, Majid, Narayanan. Sample-efficient private learning of mixtures of Gaussians.
    NeurIPS 2024, §2.2 and App. F (crude stage), App. D (hypothesis selection, Thm D.2 [BSKW19]).
    """
    y = _as_1d(X)
    k = check_scalar(k, "k", _FUNC, low=1, high=8, integer=True)
    epsilon = check_scalar(epsilon, "epsilon", _FUNC, low=0.0, low_open=True)
    delta = check_scalar(delta, "delta", _FUNC, low=0.0, high=1.0, low_open=True, high_open=True)
    n_declared = check_scalar(n_declared, "n_declared", _FUNC, low=2, integer=True)
    params = GMM1DParams() if params is None else params
    gen, seed = check_rng(rng, "mixtures:private_gmm_1d")

    ledger = Ledger(_FUNC, note="(ε, δ)-DP, one row added/removed")
    split = ledger.child("split", composition="parallel",
                        note="each row goes to one part by an independent coin: parallel composition")
    trace = Trace()
    # Disjoint split (AMN24 App. F: n₁ samples for the crude stage, n₂ fresh ones for selection).
    to_crude = gen.random(y.size) < params.crude_fraction
    y1, y2 = y[to_crude], np.sort(y[~to_crude])
    trace.add("split", released=False, n_crude=int(y1.size), n_fine=int(y2.size),
              note="part sizes are NOT private (diagnostic)")

    stage = crude_stage(y1, eps=epsilon, delta=delta, n_declared=n_declared,
                        threshold_factor=params.threshold_factor, rng=gen,
                        ledger=split.child("crude", note="Alg. 3 steps 1–5"))
    h = stage.hist
    trace.add("gap_histogram", released=False, scale=h.scale, loc=h.loc, width=h.width, count=h.count,
              noisy=stage.noisy, note="every non-empty bucket: true and noisy counts are NOT private")
    p = stage.passed
    cal = stage.calibration
    trace.add("crude_candidates", released=True, scale=h.scale[p], loc=h.loc[p], width=h.width[p],
              noisy=stage.noisy[p], threshold=cal.threshold, bound=cal.bound, eps_unit=cal.eps_unit,
              delta_unit=cal.delta_unit, note="buckets whose noisy count reached T (private release)")

    groups = group_candidates(stage)
    groups.sort(key=lambda g: -g.n_hat)
    total = sum(g.n_hat for g in groups)
    groups = [g for g in groups if g.n_hat >= params.alpha / k * total][: params.max_groups]
    trace.add("groups", released=True, means=[g.mean for g in groups], sds=[g.sd for g in groups],
              n_hat=[g.n_hat for g in groups], lo=[g.lo for g in groups], hi=[g.hi for g in groups],
              note="post-processing of the released buckets [O]")

    fine = split.child("fine", note="ε-DP hypothesis selection on the fine part")
    run_params = dict(k=k, epsilon=epsilon, delta=delta, n_declared=n_declared, options=asdict(params))
    if not groups:
        fine.record("reserved", "reserved", ApproxDP(epsilon, 0.0),
                    note="no crude candidate: the fine stage did not run (⊥)")
        return Result(None, "no gap bucket reached the threshold T (⊥)", ledger, trace.freeze(),
                      run_params, seed, guarantee=dp_total(ledger))

    eps_r = epsilon / params.n_rounds
    atoms = _atoms(groups, 1 if k == 1 else params.atoms_per_group)
    subsets, (w, mu, sd) = _round0_hypotheses(atoms, k)
    scores = min_distance_scores(w, mu, sd, y2, k, sets=params.score_sets)
    i = exponential(-scores, sensitivity=1.0, eps=eps_r, rng=gen, ledger=fine, name="round 0: groups",
                    note=f"{len(subsets)} sets of ≤ k candidate components, min-distance score")
    mix = GaussianMixture1D(w[i][w[i] > 0], mu[i][w[i] > 0], sd[i][w[i] > 0])
    trace.add("select_0", released=True, kind="groups", level=-1, subset=subsets[i], mixture=mix.to_dict(),
              n_hypotheses=len(subsets))
    trace.add("scores_0", released=False, scores=scores, chosen=i, note="scores are NOT private")
    r = 1
    for level in range(params.levels):
        for kind in ("scale", "mean", "weight", "swap"):
            if kind == "swap":
                w, mu, sd = _swap_hypotheses(mix, atoms)
            else:
                w, mu, sd = _refine_hypotheses(mix, kind, level)
            scores = min_distance_scores(w, mu, sd, y2, k, sets=params.score_sets)
            i = exponential(-scores, sensitivity=1.0, eps=eps_r, rng=gen, ledger=fine,
                            name=f"round {r}: {kind} ℓ={level}", note=f"{w.shape[0]} hypotheses")
            mix = GaussianMixture1D(w[i], mu[i], sd[i])
            trace.add(f"select_{r}", released=True, kind=kind, level=level, mixture=mix.to_dict(),
                      n_hypotheses=int(w.shape[0]))
            trace.add(f"scores_{r}", released=False, scores=scores, chosen=i, note="scores are NOT private")
            r += 1
    trace.add("mixture", released=True, **mix.to_dict())
    guarantee = dp_total(ledger)
    if guarantee.eps > epsilon * (1 + 1e-9) or guarantee.delta > delta * (1 + 1e-9):
        raise RuntimeError(f"{_FUNC} spent {guarantee}, more than (ε={epsilon}, δ={delta}): a bug.")
    return Result(mix.means[:, None], None, ledger, trace.freeze(), run_params | {"mixture": mix}, seed,
                  guarantee=guarantee)


def mixture_of(result: Result) -> GaussianMixture1D | None:
    """The selected mixture of a ``private_gmm_1d`` result (None on ⊥)."""
    return result.params.get("mixture")


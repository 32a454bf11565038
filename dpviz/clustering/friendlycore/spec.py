"""FriendlyCore clustering's registry entry: parameters, row-level guarantee, stages.

The tuple stage (FC_kTupleClustering) is private per *tuple*; one row replaces one tuple, so its
row-level cost goes through group privacy of size 2 (docs/privacy.md §2). The guarantee below
rebuilds the ledger's tuple/row totals from the public split and hands them to
:func:`dpviz.privacy.accounting.row_level_statement`, the function the app shows; calibration
inverts it by bisection on ρ (:func:`dpviz.registry.calibrate`).

References: Tsfadia et al. 2022, §5.2 (FC_Clustering, Thm 5.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpviz.clustering.friendlycore.budget import FRACTION_KEYS, PRESETS, ROW_KEYS, TUPLE_KEYS, resolve_budget
from dpviz.clustering.friendlycore.pipeline import fc_private_stage
from dpviz.clustering.tuples import ORACLES, check_declared_rows, tuple_stage
from dpviz.privacy.accounting import row_level_statement
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.registry import AlgorithmSpec, Public, check_hinted, hint, register
from dpviz.result import Result

#: The ledger keys of the tuple-level (FC_kTupleClustering) and row-level parts of the split
#: (defined with the split in dpviz.clustering.friendlycore.budget; re-exported here).
assert set(TUPLE_KEYS) | set(ROW_KEYS) == set(FRACTION_KEYS)

#: Trace steps of fc_private_stage (docs/interfaces.md).
STEPS = ("pieces", "tuples", "declared_size", "feasibility", "match_core", "reorder", "diameters",
         "dist_core", "tuple_averages", "fc_outcome", "removed_rows", "lloyd_partition", "lloyd",
         "fallback")


#: Largest t ``auto_n_tuples`` picks: the match graph costs O(t²k²d) time and t²k bytes.
MAX_AUTO_TUPLES = 5000


#: Rows per cluster per piece of the automatic t: t = n_declared / (ROWS_PER_CLUSTER·k).
ROWS_PER_CLUSTER = 16


def auto_n_tuples(n_declared: int, k: int) -> int:
    """t from the declared size: the paper's 200 (pieces of ≥ 10k rows) and, when the data is
    large, more pieces of ROWS_PER_CLUSTER·k rows (16 rows per cluster), up to MAX_AUTO_TUPLES.

    FriendlyCore's two filters need √(2ρt) above the Gaussian tail Φ⁻¹(1 − δ/t) (≈ 6–7 sds), so
    t is what lets the core form at small budgets; but a tuple only finds friends (match_1/7)
    when its piece clusters well. On Fig. 6 data (n = 5·10⁴) the mean share of match-friends per
    tuple was 0.24 / 0.65 / 0.86 / 0.98 at 25 / 40 / 60 / 100 rows a piece on an easy layout
    (min center separation 0.22) and 0.04 / 0.20 / 0.44 / 0.77 on a harder one (0.15); the filter
    margin grows like (share − 1/2)·√t, which is flat from about 100 to 200 rows a piece and falls
    fast below 60 (docs/fc_clustering.md). 16 rows per cluster (128 a piece at k = 8) sits in
    that flat part. Depends on public inputs only (the declared n and k).
    """
    paper = min(200, max(2, n_declared // (10 * k)))
    return int(min(MAX_AUTO_TUPLES, max(paper, n_declared // (ROWS_PER_CLUSTER * k))))


@dataclass(frozen=True)
class FCParams:
    """FC_Clustering's knobs (Tsfadia et al. 2022, §5.2.5, §6.2)."""

    n_tuples: int = field(default=0, metadata=hint(
        low=0, high=5000, step=1, label="tuples t",
        help="number of random pieces; 0 picks min(200, n_declared / 10k) from the declared size"))
    oracle: str = field(default="kmeans++", metadata=hint(
        choices=tuple(ORACLES), help="non-private clustering run on each piece"))
    preset: str = field(default="practical", metadata=hint(
        choices=PRESETS, help="budget split: the paper's constants or a sound practical optimizer"))
    fallback: bool = field(default=True, metadata=hint(
        help="when the core does not form, answer with a private grid coreset instead of ⊥"))
    r_min: float = field(default=0.0, metadata=hint(
        low=0.0, high=1e6, scale="log", public=True,
        help="FindDiam's smallest radius; 0 means 10⁻³·Λ"))

    def __post_init__(self) -> None:
        check_hinted(self, "FriendlyCore")


def _t(pub: Public, params: FCParams) -> int:
    return params.n_tuples or auto_n_tuples(pub.n_declared, pub.k)


def _r_min(pub: Public, params: FCParams) -> float:
    return params.r_min or 1e-3 * pub.radius


def fc_guarantee(budget: ZCDP, pub: Public, params: FCParams, delta_prime: float) -> ApproxDP:
    """The row-level (ε, δ) of FC_Clustering at ``budget``, from the public split only: the tuple-
    and row-level groups of the run's :class:`~dpviz.clustering.friendlycore.budget.FCBudget`."""
    fcb = resolve_budget(params.preset, rho=budget.rho, delta=budget.delta, t=_t(pub, params), k=pub.k,
                         r_min=_r_min(pub, params), radius=pub.radius, fallback=params.fallback)
    ledger = Ledger("fc_clustering", budget)
    for unit, part in (("tuple", fcb.tuple_level), ("row", fcb.row_level)):
        part = ZCDP(part.rho, min(part.delta, budget.delta))  # float dust of the δ fractions' sum
        ledger.child(unit, unit=unit).record(f"{unit}-level part", "gaussian", part)
    return row_level_statement(ledger, delta_prime).row


def fc_feasible(pub: Public, params: FCParams) -> None:
    """Refuse, from declared values only, t·k above the declared size (issue 25, finding 1)."""
    check_declared_rows(pub.n_declared, _t(pub, params), pub.k, "FriendlyCore")


def fc_stage(X: np.ndarray, k: int, *, radius: float, rng: np.random.Generator, pub: Public,
             params: FCParams) -> Any:
    """The non-private tuple stage (pieces and the oracle's k-tuples), cached by callers."""
    # method="auto" reads the declared size, never the rows (issue 10, finding 4).
    return tuple_stage(X, k, n_tuples=_t(pub, params), radius=radius, oracle=params.oracle, rng=rng,
                       n_declared=pub.n_declared)


def fc_private(X: np.ndarray, k: int, budget: ZCDP, *, radius: float, rng: np.random.Generator,
               pub: Public, params: FCParams, stage: Any = None) -> Result:
    """FC_Clustering's private stage at ``budget`` on the (cached) tuple stage."""
    if stage is None:
        stage = fc_stage(X, k, radius=radius, rng=rng, pub=pub, params=params)
    return fc_private_stage(X, stage, rho=budget.rho, delta=budget.delta, radius=radius,
                            r_min=_r_min(pub, params), preset=params.preset, fallback=params.fallback,
                            rng=rng, n_declared=pub.n_declared)


SPEC = register(AlgorithmSpec(
    name="friendlycore",
    title="FriendlyCore clustering",
    paper="Tsfadia, Cohen, Kaplan, Mansour, Stemmer. FriendlyCore: practical differentially private "
          "aggregation. ICML 2022, §5.2",
    budget_kind="zcdp",
    params=FCParams,
    private=fc_private,
    guarantee=fc_guarantee,
    feasible=fc_feasible,
    stage=fc_stage,
    stage_fields=("n_tuples", "oracle"),
    steps=STEPS,
    structure_step="fallback",
    rank=0,
    description="Sample-and-aggregate: cluster t random pieces, privately average the k-tuples that "
                "agree (the core), then one private Lloyd step; a private grid coreset answers when "
                "no core forms.",
))

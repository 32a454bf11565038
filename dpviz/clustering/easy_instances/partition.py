"""PrivateTestCloseTuples and PrivateTestPartition: is the tuple database nearly partitioned by far
balls? A private Success/Failure, and (non-private, used only after Success) the balls B_{Y*}.

References
----------
Cohen et al. 2021, §4.1 (PrivateTestCloseTuples) and §4.2 (PrivateTestPartition, the random
sample Q and the definition of ℓ); note §4.1–4.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpviz.privacy.budget import ApproxDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import laplace
from dpviz.result import Trace

from .plan import PartitionPlan

#: Two points of a tuple closer than this (relative to the tuple's scale) make λ = 0: such a tuple
#: is never partitioned and its balls are empty (note §8, degenerate cases) [OURS].
LAMBDA_FLOOR = 1e-12

FAILURE_TEST = "PrivateTestPartition: Failure (q̂ < τ₂): the tuples are not nearly partitioned by far balls"
FAILURE_NO_PASS = "PrivateTestPartition: Success but no sampled tuple passed (B is empty)"


def min_distances(Y: np.ndarray) -> np.ndarray:
    """λ_i = min_{j≠i} ‖y_i − y_j‖ for every tuple: (..., k, d) → (..., k); +inf when k = 1."""
    k = Y.shape[-2]
    if k == 1:
        return np.full(Y.shape[:-1], np.inf)
    diff = Y[..., :, None, :] - Y[..., None, :, :]
    dist = np.sqrt(np.einsum("...ijd,...ijd->...ij", diff, diff))
    idx = np.arange(k)
    dist[..., idx, idx] = np.inf
    return dist.min(axis=-1)


def ball_radii(Y: np.ndarray, gamma: float) -> np.ndarray:
    """r_i^Y = γ·min_{j≠i} ‖y_i − y_j‖ (so B_Y is (1/γ)-far "by definition") [D]."""
    return gamma * min_distances(Y)


def partitioned_by(T: np.ndarray, Y: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """(t,) bool: tuple X is partitioned by {B(y_i, r_i)}, i.e. |X ∩ B_i| = 1 for every i.

    All t·k points against the k centers at once: one matrix product (Gram form, centred on Y's
    mean to stay exact at large norms) for d > 8, else a pass per ball and coordinate (4× faster than
    one broadcast at t = 1000, k = 8, d = 2).
    """
    t, k, d = T.shape
    mu = Y.mean(axis=0)
    P = T.reshape(t * k, d) - mu
    Yc = Y - mu
    r2 = radii * radii
    if d > 8:
        d2 = np.einsum("ij,ij->i", P, P)[:, None] + np.einsum("ij,ij->i", Yc, Yc)[None, :] - 2.0 * (P @ Yc.T)
        counts = (d2 <= r2[None, :]).reshape(t, k, k).sum(axis=1, dtype=np.int32)
    else:
        counts = np.empty((t, k), dtype=np.int32)
        for i in range(k):  # loop over the k balls, vectorized over all points
            d2 = (P[:, 0] - Yc[i, 0]) ** 2
            for j in range(1, d):
                d2 += (P[:, j] - Yc[i, j]) ** 2
            counts[:, i] = (d2 <= r2[i]).reshape(t, k).sum(axis=1)
    return np.all(counts == 1, axis=1)


@dataclass(frozen=True)
class PartitionOutcome:
    """What PrivateTestCloseTuples did.

    Attributes
    ----------
    success : bool — the private status · q_hat : float — private noisy pass count
    sample : (m,) indices of Q in T (internal) · radii : (m, k) ball radii γλ_i (internal)
    ell : (m,) ℓ_Y, tuples NOT partitioned by B_Y (internal) · ell_hat : (m,) ℓ_Y + Lap (internal)
    passed : (m,) bool, ℓ̂_Y ≤ τ₁ (internal) · q : int (internal)
    chosen : position in Q of Y* (first passing), or None · partitioned : (t,) bool, tuples
    partitioned by B_{Y*} (internal; all False without Y*)
    """

    success: bool
    q_hat: float
    sample: np.ndarray
    radii: np.ndarray
    ell: np.ndarray
    ell_hat: np.ndarray
    passed: np.ndarray
    q: int
    chosen: int | None
    partitioned: np.ndarray

    @property
    def failure(self) -> str | None:
        if not self.success:
            return FAILURE_TEST
        return FAILURE_NO_PASS if self.chosen is None else None


def private_test_close_tuples(
    T: np.ndarray, sample: np.ndarray, *, plan: PartitionPlan, rng: np.random.Generator, ledger: Ledger,
    valid: np.ndarray | None = None,
) -> PartitionOutcome:
    """PrivateTestCloseTuples(T, Q, ε₁, ε₂, β, γ) (§4.1) with Q = T[sample].

    1. For Y ∈ Q: B_Y = {B(y_i, γλ_i)} [D]; ℓ_Y = #{X ∈ T not partitioned by B_Y} [S-skel];
       ℓ̂_Y = ℓ_Y + Lap(1/ε₁); pass_Y = 1{ℓ̂_Y ≤ τ₁ = ln(2m/β)/ε₁} [D].
    2. q = Σ pass_Y; q̂ = q + Lap(1/ε₂) [S-skel]. 3. Success iff q̂ ≥ τ₂ = m − ln(2/β)/ε₂ [D].
    4. Y* = the first passing Y in Q [S]. O(m·t·k²·d): one matrix product per sampled tuple.

    Privacy
    -------
    Status is (m·ε₁)-DP in T (the m counts, ℓ1-sensitivity m, one Laplace vector) and ε₂-DP in Q;
    the ledger records ε_T = m·ε₁ and the subsampling-amplified ε_Q (see PrivateTestPartition).
    """
    t, _k, _ = T.shape
    m = sample.size
    Q = T[sample]
    radii = ball_radii(Q, plan.gamma)
    ok = np.ones(t, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    part = np.empty((m, t), dtype=bool)
    for a in range(m):  # one matrix product per sampled tuple
        if np.all(radii[a] > LAMBDA_FLOOR):
            part[a] = partitioned_by(T, Q[a], radii[a]) & ok
        else:
            part[a] = False
    ell = (t - part.sum(axis=1)).astype(np.float64)
    ell_hat = np.asarray(laplace(ell, sensitivity=float(m), eps=plan.eps_T, rng=rng, ledger=ledger,
                                 name=f"ℓ̂_Y = ℓ_Y + Lap(1/ε₁), {m} tuples of Q",
                                 note=f"ε₁ = ε_T/m = {plan.eps1:.4g}; τ₁ = {plan.tau1:.4g}"),
                         dtype=np.float64).reshape(m)
    passed = ell_hat <= plan.tau1
    q = int(passed.sum())
    scale = 1.0 / plan.eps2
    q_hat = q + float(rng.laplace(0.0, scale))
    ledger.record("q̂ = q + Lap(1/ε₂) (Q: m of t sampled without replacement)", "laplace",
                  ApproxDP(plan.eps_Q, 0.0), sensitivity=1.0, noise_scale=scale,
                  note=f"ε₂ = {plan.eps2:.4g} amplified by subsampling m={m} of t={t} to ε_Q = "
                       f"{plan.eps_Q:.4g}; τ₂ = {plan.tau2:.4g}")
    success = q_hat >= plan.tau2
    chosen = int(np.flatnonzero(passed)[0]) if success and passed.any() else None
    partitioned = part[chosen] if chosen is not None else np.zeros(t, dtype=bool)
    return PartitionOutcome(bool(success), q_hat, sample, radii, ell, ell_hat, passed, q, chosen, partitioned)


def private_test_partition(
    T: np.ndarray, *, plan: PartitionPlan, rng: np.random.Generator, ledger: Ledger, trace: Trace,
    valid: np.ndarray | None = None, event_delta: float = 0.0,
) -> PartitionOutcome:
    """PrivateTestPartition(T, ε_s, δ₀, β, γ) (§4.2): Q = m tuples sampled from T without replacement
    [S], then PrivateTestCloseTuples. ``event_delta`` is the δ of the §4.2.1 claim's conditioning,
    (1 + e^ε)·δ₀, recorded as an event [D].

    Privacy
    -------
    Status is (ε_T + ε_Q)-DP for replacing one tuple (t fixed) [S-skel/D]; with Success, B
    ℓ-nearly partitions T except with probability δ₀ (recorded through ``event_delta``).
    """
    t = T.shape[0]
    node = ledger.child("PrivateTestPartition",
                        note=f"m={plan.m}, ε₁={plan.eps1:.4g}, ε₂={plan.eps2:.4g}, ℓ={plan.ell:.1f}")
    sample = np.sort(rng.choice(t, size=plan.m, replace=False))
    out = private_test_close_tuples(T, sample, plan=plan, rng=rng, ledger=node, valid=valid)
    if event_delta > 0:
        node.record_event("B ℓ-nearly partitions T on Success (§4.2.1 claim)", event_delta,
                          note=f"(1 + e^ε)·δ₀ with δ₀ = {plan.delta0:.3g}")
        # record_event writes a ZCDP(0, δ) spend; store it as ApproxDP(0, δ) for dp_total.
        ev = node.children.pop()
        node.record(ev.name, "event", ApproxDP(0.0, event_delta), note=ev.note)
    trace.add("test", released=False, sample=out.sample, radii=out.radii, ell=out.ell,
              ell_hat=out.ell_hat, tau1=plan.tau1, passed=out.passed, q=out.q, chosen=out.chosen,
              chosen_index=None if out.chosen is None else int(out.sample[out.chosen]),
              partitioned=out.partitioned,
              note="counts ℓ_Y, ℓ̂_Y, pass_Y and the chosen Y* are internal (non-private)")
    trace.add("status", released=True, success=out.success, q_hat=out.q_hat, tau2=plan.tau2, m=plan.m,
              note="the private Success/Failure and its noisy count q̂")
    return out

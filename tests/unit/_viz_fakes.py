"""Hand-built FC clustering Results (trace schema of INTERFACES.md) for the viz unit tests.

The builders take a Result, so a Result built by hand with Trace and Ledger is a legitimate
input; the integration test in test_viz_storyboard.py runs the real fc_clustering.
"""

from __future__ import annotations

import numpy as np

from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.result import Result, Trace

TRUE_CENTERS = np.array([[-0.6, -0.3], [0.0, 0.6], [0.6, -0.3]])


def blobs(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    return TRUE_CENTERS[y] + 0.05 * rng.standard_normal((n, 2)), y


def fake_ledger(rho: float = 1.0, delta: float = 1e-6) -> Ledger:
    root = Ledger("fc_clustering", ZCDP(rho, delta))
    tup = root.child("FC_kTupleClustering", ZCDP(rho / 2, delta / 2), unit="tuple")
    tup.record("FriendlyCore(match_1/7)", "gaussian", ZCDP(rho / 4, delta / 4), sensitivity=1.0,
               noise_scale=3.0)
    tup.record("FC_AvgOrdTup", "gaussian", ZCDP(rho / 4, delta / 4), sensitivity=0.1,
               noise_scale=0.01)
    lloyd = root.child("NoisyLloydStep", ZCDP(rho / 2, delta / 2), composition="parallel")
    for j in range(3):
        lloyd.record(f"FriendlyAvg[{j}]", "gaussian", ZCDP(rho / 2, delta / 2), sensitivity=2.0,
                     noise_scale=0.02)
    return root


def fake_fc_result(
    *,
    seed: int = 0,
    n: int = 600,
    t: int = 30,
    stop_after: str | None = None,
    fallback: bool = True,
    perm: np.ndarray | None = None,
) -> tuple[Result, np.ndarray]:
    """(Result, X). ``stop_after`` drops every pipeline step after it (a failed run);
    ``perm`` permutes the coordinate order of every per-cluster quantity (as π would)."""
    rng = np.random.default_rng(seed)
    X, _ = blobs(n, seed)
    k = 3
    perm = np.arange(k) if perm is None else np.asarray(perm)
    centers0 = TRUE_CENTERS[perm]
    piece_of_row = rng.integers(0, t, size=n)
    tuples = np.stack([centers0[rng.permutation(k)] + 0.02 * rng.standard_normal((k, 2))
                       for _ in range(t)])
    tuples[-3:] = 0.9 * rng.standard_normal((3, k, 2))  # three bad tuples
    keep = np.ones(t, bool)
    keep[-3:] = False
    counts = np.where(keep, t, 2).astype(float)
    scores = counts - t / 2
    noisy = scores + rng.normal(0, 1.0, t)
    core_index = np.flatnonzero(keep)
    reference = tuples[core_index[0]]
    ref_order = np.argsort([np.argmin(np.linalg.norm(centers0 - x, axis=1)) for x in reference])
    reference = reference[ref_order]
    ordered = np.stack([tuples[i][np.argmin(np.linalg.norm(tuples[i][None] - reference[:, None],
                                                           axis=2), axis=1)]
                        for i in core_index])
    nonpriv = ordered.mean(axis=0)
    private = nonpriv + 0.01 * rng.standard_normal(nonpriv.shape)
    labels = np.argmin(np.linalg.norm(X[:, None] - private[None], axis=2), axis=1)
    lloyd = np.stack([X[labels == j].mean(axis=0) for j in range(k)])
    probes = [[dict(r=0.01 * 1.5**e, a=float(min(c := len(core_index), 3 * e)),
                    a_hat=float(min(c, 3 * e)) + 0.5, threshold=c - 4.0, accepted=3 * e >= c - 4)
               for e in range(12)] for _ in range(k)]
    tr = Trace()
    steps = [
        ("pieces", False, dict(piece_of_row=piece_of_row, piece_sizes=np.bincount(piece_of_row))),
        ("tuples", False, dict(tuples=tuples)),
        ("feasibility", True, dict(margins={"match": 3.0}, fractions={"match": 0.25},
                                   preset="practical")),
        ("match_core", False, dict(counts=counts, scores=scores, noisy_scores=noisy,
                                   threshold=4.0, n_hat=t + 2.0, keep=keep)),
        ("reorder", False, dict(core_index=core_index, reference_index=int(core_index[0]),
                                reference=reference, permutation=ref_order, ordered=ordered)),
        ("diameters", True, dict(radii=np.full(k, 0.05), radii_used=np.full(k, 0.05),
                                 probes=probes)),
        ("dist_core", False, dict(counts=np.full(len(core_index), len(core_index)),
                                  scores=np.full(len(core_index), len(core_index) / 2),
                                  noisy_scores=np.full(len(core_index), len(core_index) / 2),
                                  threshold=3.0, n_hat=len(core_index) + 1.0,
                                  keep=np.ones(len(core_index), bool))),
        ("tuple_averages", True, dict(centers=private, sigma=np.full(k, 0.01), n_hat=26.0)),
        ("tuple_averages_nonprivate", False, dict(centers=nonpriv)),
        ("lloyd_partition", False, dict(labels=labels, counts=np.bincount(labels, minlength=k),
                                        n_removed=0)),
        ("lloyd", True, dict(centers=lloyd, sigma=np.full(k, 0.003), n_hat=np.bincount(labels))),
    ]
    used = False
    fb_centers = None
    for name, rel, data in steps:
        tr.add(name, released=rel, **data)
        if name == stop_after:
            used = True
            break
    reason = f"empty core after '{stop_after}'" if used else None
    if used and fallback:
        fb_centers = TRUE_CENTERS + 0.05
    tr.add("fallback", released=True, used=used and fallback, reason=reason,
           method="dp_lloyd", centers=fb_centers)
    centers = fb_centers if used else lloyd
    failure = reason if used and not fallback else None
    return Result(centers, failure, fake_ledger(), tr.freeze(), {"k": k}, seed), X
